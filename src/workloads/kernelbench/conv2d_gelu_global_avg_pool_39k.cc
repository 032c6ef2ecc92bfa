// 39k_Conv2d_GELU_GlobalAvgPool: KernelBench level 2 problem 67 (PyTorch, translated to JAX): a 3x3
// VALID convolution with bias, GELU, then the mean over each output plane.
//
// Operator  out[n, c] = mean_hw(gelu(conv2d(x, weight) + bias[c])), gelu the tanh approximation
//           (jax.nn.gelu's default, as the translation calls it).
// Inputs    x       bf16 (N, Cin, H, W)     uniform[0,1) + a per-(sample, channel) offset
//                                           normal(0,1) (see Deviations)
//           weight  bf16 (Cout, Cin, 3, 3)  normal*0.02
//           bias    bf16 (Cout)             normal*0.02
// Output    out     bf16 (N, Cout)
// FLOPs     2*N*Cout*Ho*Wo*Cin*3*3 (GELU and the mean are not counted); 76,106,170,368 at full size
//           (N=128, Cin=8, Cout=64, H=W=256).
// Character a convolution with a short reduction (K = Cin*9 = 72) whose output (8x the input's
//           values) is consumed at once by the pool: 144 FLOPs per output value, so the GEMM's
//           weight reuse is low and the output stream matters; the fused kernel never writes it.
// Deviations
//   - x gets one offset per (sample, channel), normal(0,1), on top of the original's
//     uniform[0,1): with iid inputs every sample's pooled output is the same to ~1e-3 (the mean of
//     64K pixels), so an output with the samples permuted, or one sample copied to all, passed.
//   - The cpu preset is (N, H, W) = (8, 146, 146) with the original's channels and kernel
//     (1.5 GFLOP). Smoke uses odd channel counts (5 -> 11) and spatial extents.
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "ops/jnp_bf16.h"
#include "scaffolds.h"
#include "workloads/kit/conv_layer.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using Shape = conv_kit::Shape2d;
constexpr std::int64_t kKernel = 3;

constexpr Presets<Shape> kPresets = {
    .smoke = {3, 5, 11, 13, 15},
    .cpu = {8, 8, 64, 146, 146},
    .full = {128, 8, 64, 256, 256},
};

constexpr auto geometry_of = conv_kit::valid_geometry<kKernel, Shape>;

// (N, Cout): one mean per output plane.
std::vector<std::int64_t> pooled_extents(const ops::ConvGeometry& g) {
  return {g.batch, g.out_channels};
}

Problem make_problem(Size size) {
  const ops::ConvGeometry g = geometry_of(kPresets.at(size));
  Problem problem =
      conv_kit::problem(g, InitRule::structured(ops::fill_uniform_with_channel_offsets), "weight",
                        InitRule::normal(0.02));
  conv_kit::add_vectors(problem, g.out_channels, {{"bias", InitRule::normal(0.02)}});
  return conv_kit::with_output(std::move(problem), pooled_extents(g));
}

constexpr auto shape_of_call = conv_kit::shape_of_call<Shape, geometry_of, 1, pooled_extents>;

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

int reference(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::vector<double> y = conv_kit::reference(g, in[0], in[1], in[2]);
  const std::size_t plane = conv_kit::output_plane(g);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t p = 0; p * plane < y.size(); ++p) {
    double sum = 0;
    for (std::size_t i = 0; i < plane; ++i) sum += gelu_tanh(y[p * plane + i]);
    o[p] = static_cast<float>(sum / static_cast<double>(plane));
  }
  return 0;
}

// What a fusing compiler emits: per sample, the convolution with its bias fused, written
// channels-last; then GELU fused into the pool, one pass over the output summing each channel's
// GELU values (XLA's tanh). On the AMX Xeon a sample's conv took 0.50 ms bare and 0.96 ms with
// oneDNN's GELU post-op; the fused pass costs less than the difference.
int baseline(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::size_t plane = conv_kit::output_plane(g);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  // One sample at a time: its conv output (5.3 MB at the cpu size) is pooled while it is still
  // in cache rather than after the whole batch's went to memory.
  ops::F32Buffer y(plane * channels);
  std::vector<float> sums(channels);
  for (std::size_t n = 0; n < static_cast<std::size_t>(s.batch); ++n) {
    conv_kit::conv_sample(g, in[0], in[1], n, y.data(), ops::ConvLayout::kChannelsLast,
                          {bias.data()});
    sums.assign(channels, 0.0f);
    ops::add_gelu_rows(y.data(), plane, channels, sums.data());
    for (std::size_t c = 0; c < channels; ++c)
      conv_kit::store(out[0], n * channels + c, sums[c] / static_cast<float>(plane));
  }
  return 0;
}

// The JAX program in bf16: the conv's bf16 result, + bias, jax.nn.gelu's ops (cube, scale, add,
// scale, tanh, 1 + ., product) each rounded to bf16; the mean accumulated in f32 (jnp.mean upcasts
// bf16) and rounded.
int bf16_program(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::size_t plane = conv_kit::output_plane(g);
  ops::F32Buffer y = conv_kit::bf16_conv_bias(g, in[0], in[1], in[2]);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t p = 0; p * plane < y.size(); ++p) {
    float* v = y.data() + p * plane;
    for (std::size_t i = 0; i < plane; ++i) v[i] = ops::jnp::gelu_tanh(v[i]);
    o[p] = f32_to_bf16(ops::sum_f32(v, plane) / static_cast<float>(plane));
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kConv2dGeluGlobalAvgPool39k = with_programs<Programs>({
    .name = "39k_Conv2d_GELU_GlobalAvgPool",
    .kernelbench_problem = 67,
    .summary = "mean_hw(gelu_tanh(conv2d_3x3_valid(x, weight) + bias)) on bf16 NCHW -> (N, Cout)",
    .problem = make_problem,
    .scaffold = scaffolds::k39k_Conv2d_GELU_GlobalAvgPool,
});

}  // namespace kbench
