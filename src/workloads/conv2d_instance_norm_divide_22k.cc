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
//   - The cpu preset is (N, H, W) = (4, 82, 82) with the original's channels and kernel
//     (3.8 GFLOP). Smoke uses odd channel counts (13 -> 19) and spatial extents.
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "workloads/conv.h"
#include "workloads/matmul_ops.h"
#include "workloads/ops.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

struct Shape {
  std::int64_t batch, in_channels, out_channels, height, width;
};
constexpr std::int64_t kKernel = 3;
constexpr double kEps = 1e-5;
constexpr double kDivideBy = 2.0;

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {2, 13, 19, 11, 13};
    case Size::kCpu:
      return {4, 64, 128, 82, 82};
    case Size::kFull:
      break;
  }
  return {128, 64, 128, 128, 128};
}

ops::ConvGeometry geometry_of(const Shape& s) {
  return {s.batch, s.in_channels, s.out_channels, {s.height, s.width}, {kKernel, kKernel}};
}

Problem make_problem(Size size) {
  const Shape s = shape_of(size);
  const auto [n, ci, co, h, w] = s;
  Problem problem;
  problem.config = {{"batch_size", n},
                    {"in_channels", ci},
                    {"out_channels", co},
                    {"kernel_size", kKernel},
                    {"divide_by", kDivideBy}};
  problem.inputs = {
      {{"x", KB_BF16, {n, ci, h, w}}, InitRule::uniform(0.0, 1.0)},
      {{"weight", KB_BF16, {co, ci, kKernel, kKernel}}, InitRule::normal(0.02)},
      {{"conv_bias", KB_BF16, {co}}, InitRule::normal(0.02)},
      {{"in_weight", KB_BF16, {co}}, InitRule::uniform(0.5, 1.5)},
      {{"in_bias", KB_BF16, {co}}, InitRule::normal(0.1)},
  };
  problem.outputs = {{"out", KB_BF16, {n, co, h - kKernel + 1, w - kKernel + 1}}};
  problem.flops = ops::conv_direct_flops(geometry_of(s));
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 5 || num_outputs != 1 || in[0].rank != 4 || in[1].rank != 4)
    return std::nullopt;
  const Shape s{in[0].shape[0], in[0].shape[1], in[1].shape[0], in[0].shape[2], in[0].shape[3]};
  const auto [n, ci, co, h, w] = s;
  if (h < kKernel || w < kKernel || !ops::matches(in[0], KB_BF16, {n, ci, h, w}) ||
      !ops::matches(in[1], KB_BF16, {co, ci, kKernel, kKernel}) ||
      !ops::matches(in[2], KB_BF16, {co}) || !ops::matches(in[3], KB_BF16, {co}) ||
      !ops::matches(in[4], KB_BF16, {co}) ||
      !ops::is_float_output(out[0], {n, co, h - kKernel + 1, w - kKernel + 1}))
    return std::nullopt;
  return s;
}

std::size_t plane_of(const Shape& s) {
  return static_cast<std::size_t>((s.height - kKernel + 1) * (s.width - kKernel + 1));
}

int reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
              kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_F32) return 1;
  std::vector<double> y =
      ops::conv_reference(geometry_of(*s), static_cast<const bf16_t*>(in[0].data),
                          static_cast<const bf16_t*>(in[1].data));
  const auto* conv_bias = static_cast<const bf16_t*>(in[2].data);
  const auto* gamma = static_cast<const bf16_t*>(in[3].data);
  const auto* beta = static_cast<const bf16_t*>(in[4].data);
  const std::size_t plane = plane_of(*s);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t p = 0; p * plane < y.size(); ++p) {
    const std::size_t c = p % static_cast<std::size_t>(s->out_channels);
    double* v = y.data() + p * plane;
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < plane; ++i) mean += v[i] += bf16_to_f32(conv_bias[c]);
    mean /= static_cast<double>(plane);
    for (std::size_t i = 0; i < plane; ++i) var += (v[i] - mean) * (v[i] - mean);
    const double inv_std = 1.0 / std::sqrt(var / static_cast<double>(plane) + kEps);
    for (std::size_t i = 0; i < plane; ++i)
      o[p * plane + i] = static_cast<float>(
          ((v[i] - mean) * inv_std * bf16_to_f32(gamma[c]) + bf16_to_f32(beta[c])) / kDivideBy);
  }
  return 0;
}

// What a fusing compiler emits: the convolution with its bias fused, written as f32 NCHW planes;
// then per plane (L2-resident) a mean pass, a variance pass, and one normalize-scale-shift-divide
// pass that stores the output once in its dtype.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s) return 1;
  const std::size_t plane = plane_of(*s);
  const std::size_t planes = static_cast<std::size_t>(s->batch * s->out_channels);
  const ops::F32Buffer conv_bias = ops::load_f32(in[2]);
  const ops::F32Buffer gamma = ops::load_f32(in[3]);
  const ops::F32Buffer beta = ops::load_f32(in[4]);
  ops::F32Buffer y(planes * plane);
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32,
            ops::ConvLayout::kPlain, {conv_bias.data()});
  const bool bf16_out = out[0].dtype == KB_BF16;
  for (std::size_t p = 0; p < planes; ++p) {
    const std::size_t c = p % static_cast<std::size_t>(s->out_channels);
    const float* v = y.data() + p * plane;
    const float mean = ops::sum_f32(v, plane) / static_cast<float>(plane);
    const float var = ops::sum_squared_deviations(v, plane, mean) / static_cast<float>(plane);
    const float scale =
        gamma.data()[c] / std::sqrt(var + static_cast<float>(kEps)) / static_cast<float>(kDivideBy);
    const float shift = beta.data()[c] / static_cast<float>(kDivideBy) - mean * scale;
    if (bf16_out) {
      auto* o = static_cast<bf16_t*>(out[0].data) + p * plane;
      for (std::size_t i = 0; i < plane; ++i) o[i] = f32_to_bf16(v[i] * scale + shift);
    } else {
      auto* o = static_cast<float*>(out[0].data) + p * plane;
      for (std::size_t i = 0; i < plane; ++i) o[i] = v[i] * scale + shift;
    }
  }
  return 0;
}

// The JAX program in bf16: conv result rounded to bf16, + bias rounded; mean and variance
// accumulated in f32 (jnp.mean/jnp.var upcast bf16) and rounded to bf16; then x - mean, var + eps,
// sqrt, the division, * weight, + bias and / 2 each rounding to bf16.
int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_BF16) return 1;
  const std::size_t plane = plane_of(*s);
  const std::size_t planes = static_cast<std::size_t>(s->batch * s->out_channels);
  ops::F32Buffer y(planes * plane);
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32,
            ops::ConvLayout::kPlain);
  const auto* conv_bias = static_cast<const bf16_t*>(in[2].data);
  const auto* gamma = static_cast<const bf16_t*>(in[3].data);
  const auto* beta = static_cast<const bf16_t*>(in[4].data);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t p = 0; p < planes; ++p) {
    const std::size_t c = p % static_cast<std::size_t>(s->out_channels);
    float* v = y.data() + p * plane;
    for (std::size_t i = 0; i < plane; ++i)
      v[i] = round_to_bf16(round_to_bf16(v[i]) + bf16_to_f32(conv_bias[c]));
    const float mean_f32 = ops::sum_f32(v, plane) / static_cast<float>(plane);
    const float var =
        round_to_bf16(ops::sum_squared_deviations(v, plane, mean_f32) / static_cast<float>(plane));
    const float mean = round_to_bf16(mean_f32);
    const float denom = round_to_bf16(std::sqrt(round_to_bf16(var + static_cast<float>(kEps))));
    for (std::size_t i = 0; i < plane; ++i) {
      const float normalized = round_to_bf16(round_to_bf16(v[i] - mean) / denom);
      const float affine =
          round_to_bf16(round_to_bf16(normalized * bf16_to_f32(gamma[c])) + bf16_to_f32(beta[c]));
      o[p * plane + i] = f32_to_bf16(affine / static_cast<float>(kDivideBy));
    }
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kConv2dInstanceNormDivide22k;
const Workload kConv2dInstanceNormDivide22k = {
    .id = "22k",
    .name = "22k_Conv2d_InstanceNorm_Divide",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem 17_Conv2d_InstanceNorm_Divide",
    .summary = "InstanceNorm(conv2d_3x3_valid(x, weight) + conv_bias) / 2 on bf16 NCHW",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    // The bf16 program rounds the conv output before normalizing: its error 2^-9 |y| becomes
    // 2^-9 |y| / sigma in normalized units (|y| / sigma reaches ~5 at these inits, the uniform[0,1)
    // input giving each channel a mean well above its spread), and ~6 further bf16 ops add up to
    // 2^-9 |out| each: |err| <~ 2^-9 (5 + 6 |out|) ~ 0.01 + 0.012 |out| before gamma. Measured
    // (20 smoke + 3 cpu seeds): worst 0.053 at |out| 2.4, rel-L2 up to 0.0072. The bounds are about
    // twice that; 5% RMS noise (rel-L2 0.05) stays 3x over the rel-L2 bound.
    .tolerance = Tolerance{.atol = 0.05, .rtol = 0.02, .max_rel_l2 = 0.015},
    .math = MathClass::kBf16Matmul,
    .bf16_program = bf16_program,
};

}  // namespace kbench
