// 22k_Conv2d_InstanceNorm_Divide: KernelBench level 2 problem 17 (PyTorch, translated to JAX): a
// 3x3 VALID convolution with bias, an affine InstanceNorm over each (sample, channel) plane, then a
// division by a constant.
//
// Operator  y = conv2d(x, weight) + conv_bias[c];
//           out = ((y - mean_hw(y)) / sqrt(var_hw(y) + 1e-5) * in_weight[c] + in_bias[c]) / 2.0,
//           mean and (biased) variance over each plane's H x W.
// Inputs    x          bf16 (N, Cin, H, W)    uniform[0,1)
//           weight     bf16 (Cout, Cin, 3, 3) normal*0.02
//           conv_bias  bf16 (Cout)            normal*0.02
//           in_weight  bf16 (Cout)            uniform[0.5,1.5)  (original: ones, see Deviations)
//           in_bias    bf16 (Cout)            normal*0.1        (original: zeros)
// Output    out        bf16 (N, Cout, H-2, W-2)
// FLOPs     2*N*Cout*Ho*Wo*Cin*3*3 (the norm is not counted); 299,649,466,368 at full size
//           (N=128, Cin=64, Cout=128, H=W=128).
// Character compute-bound convolution, then a per-plane reduction and normalization (two passes
//           over an L2-resident plane).
// Deviations
//   - in_weight and in_bias are non-trivial (the original's ones and zeros make the affine step an
//     identity that a kernel could skip unnoticed).
//   - conv_bias cancels exactly in the instance norm (each plane's mean takes its channel's bias
//     with it), in the original as here: a kernel may skip it (cancelled_inputs).
//   - The cpu preset is (N, H, W) = (4, 82, 82) with the original's channels and kernel
//     (3.8 GFLOP). Smoke uses odd channel counts (13 -> 19) and spatial extents.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "scaffolds.h"
#include "workloads/kit/conv_layer.h"
#include "workloads/kit/entry.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr std::string_view kCancelledInputs[] = {"conv_bias"};

using Shape = conv_kit::Shape2d;
constexpr std::int64_t kKernel = 3;
constexpr double kEps = 1e-5;
constexpr double kDivideBy = 2.0;

constexpr auto geometry_of = conv_kit::valid_geometry<kKernel, Shape>;

Problem make_problem(Size size) {
  const ops::ConvGeometry g = geometry_of(conv_kit::kPresets2d.at(size));
  Problem problem =
      conv_kit::problem(g, InitRule::uniform(0.0, 1.0), "weight", InitRule::normal(0.02));
  problem.config.push_back({"divide_by", kDivideBy});
  conv_kit::add_vectors(problem, g.out_channels,
                        {{"conv_bias", InitRule::normal(0.02)},
                         {"in_weight", InitRule::uniform(0.5, 1.5)},
                         {"in_bias", InitRule::normal(0.1)}});
  return conv_kit::with_output(std::move(problem), conv_kit::output_extents(g));
}

constexpr auto shape_of_call = conv_kit::shape_of_call<Shape, geometry_of, 3>;

int reference(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::vector<double> y = conv_kit::reference(g, in[0], in[1], in[2]);
  const std::size_t sample = conv_kit::output_plane(g) * static_cast<std::size_t>(s.out_channels);
  auto* o = static_cast<float*>(out[0].data);
  conv_kit::reference_group_norm(
      g, y, static_cast<std::size_t>(s.out_channels), kEps, in[3], in[4],
      [&](std::size_t n, std::size_t j, double, double normed) {
        o[n * sample + j] = static_cast<float>(normed / kDivideBy);
      },
      [](std::size_t) {});
  return 0;
}

// What a fusing compiler emits: the convolution with its bias fused, written as f32 NCHW planes;
// then per plane (L2-resident) a mean pass, a variance pass, and one normalize-scale-shift-divide
// pass that stores the output once in its dtype.
int baseline(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::size_t plane = conv_kit::output_plane(g);
  const std::size_t planes = static_cast<std::size_t>(s.batch * s.out_channels);
  const auto [conv_bias, gamma, beta] = conv_kit::load_bias_and_affine(in);
  ops::F32Buffer y(planes * plane);
  ops::conv(g, in[0].data, KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32, ops::ConvLayout::kPlain,
            {conv_bias.data()});
  // The planes are independent: split over the threads.
#pragma omp parallel for schedule(static)
  for (std::size_t p = 0; p < planes; ++p) {
    const std::size_t c = p % static_cast<std::size_t>(s.out_channels);
    const float* v = y.data() + p * plane;
    const float mean = ops::sum_f32(v, plane) / static_cast<float>(plane);
    const float var = ops::sum_squared_deviations(v, plane, mean) / static_cast<float>(plane);
    const float scale =
        gamma.data()[c] / std::sqrt(var + static_cast<float>(kEps)) / static_cast<float>(kDivideBy);
    const float shift = beta.data()[c] / static_cast<float>(kDivideBy) - mean * scale;
    conv_kit::store_scaled(out[0], p * plane, v, plane, scale, shift);
  }
  return 0;
}

// The JAX program in bf16: conv result rounded to bf16, + bias rounded; mean and variance
// accumulated in f32 (jnp.mean/jnp.var upcast bf16) and rounded to bf16; then x - mean, var + eps,
// sqrt, the division, * weight, + bias and / 2 each rounding to bf16.
int bf16_program(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::size_t sample = conv_kit::output_plane(g) * static_cast<std::size_t>(s.out_channels);
  ops::F32Buffer y = conv_kit::bf16_conv_bias(g, in[0], in[1], in[2]);
  auto* o = static_cast<bf16_t*>(out[0].data);
  conv_kit::bf16_group_norm(
      g, y, static_cast<std::size_t>(s.out_channels), kEps, in[3], in[4],
      [&](std::size_t n, std::size_t j, float, float affine) {
        o[n * sample + j] = f32_to_bf16(affine / static_cast<float>(kDivideBy));
      },
      [](const float*, std::size_t) {}, [](std::size_t) {});
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kConv2dInstanceNormDivide22k = with_programs<Programs>({
    .name = "22k_Conv2d_InstanceNorm_Divide",
    .kernelbench_problem = 17,
    .summary = "InstanceNorm(conv2d_3x3_valid(x, weight) + conv_bias) / 2 on bf16 NCHW",
    .problem = make_problem,
    // The bf16 program rounds the conv output before normalizing: its error 2^-9 |y| becomes
    // 2^-9 |y| / sigma in normalized units (|y| / sigma reaches ~5 at these inits, the uniform[0,1)
    // input giving each channel a mean well above its spread), and ~6 further bf16 ops add up to
    // 2^-9 |out| each: |err| <~ 2^-9 (5 + 6 |out|) ~ 0.01 + 0.012 |out| before gamma. Measured
    // (20 smoke + 3 cpu seeds): worst 0.053 at |out| 2.4, rel-L2 up to 0.0072. The bounds are about
    // twice that; 5% RMS noise (rel-L2 0.05) stays 3x over the rel-L2 bound.
    .tolerance = Tolerance{.atol = 0.05, .rtol = 0.02, .max_rel_l2 = 0.015},
    .cancelled_inputs = kCancelledInputs,
    .scaffold = scaffolds::k22k_Conv2d_InstanceNorm_Divide,
});

}  // namespace kbench
