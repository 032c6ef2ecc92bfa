// 46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp: KernelBench level 2 problem 92
// (PyTorch, translated to JAX): a 3x3 VALID convolution with bias, GroupNorm, tanh, hardswish, a
// residual add of the conv output, then logsumexp over the channels.
//
// Operator  y = conv2d(x, conv_weight) + conv_bias[c];
//           g = (y - mean_g(y)) / sqrt(var_g(y) + 1e-5) * gn_weight[c] + gn_bias[c], statistics
//           over each group of C/16 channels and all of H, W (16 groups);
//           t = tanh(g);  h = t * relu6(t + 3) / 6;  out[n, 0, i, j] = logsumexp_c(y + h).
// Inputs    x            bf16 (N, Cin, H, W)    uniform[0,1)
//           conv_weight  bf16 (Cout, Cin, 3, 3) normal*0.02
//           conv_bias    bf16 (Cout)            normal*0.02
//           gn_weight    bf16 (Cout)            uniform[0.5,1.5)  (original: ones, see Deviations)
//           gn_bias      bf16 (Cout)            normal*0.1        (original: zeros)
// Output    out          bf16 (N, 1, H-2, W-2)
// FLOPs     2*N*Cout*Ho*Wo*Cin*3*3 (the epilogue is not counted); 18,728,091,648 at full size
//           (N=128, Cin=8, Cout=64, H=W=128).
// Character a convolution with a short reduction (K = Cin*9 = 72) whose 64-channel output is
//           reduced over its channels at every pixel after a per-group normalization: the group
//           statistics need the whole sample's output before the epilogue (two passes), and the
//           epilogue costs a tanh and an exp per value (transcendental-bound beside the conv).
// Deviations
//   - gn_weight and gn_bias are non-trivial (the original's ones and zeros make the affine step an
//     identity that a kernel could skip unnoticed).
//   - The cpu preset is (N, H, W) = (12, 98, 98) with the original's channels and kernel
//     (1.0 GFLOP). Smoke uses Cin = 5, Cout = 32 (16 groups of 2) and odd spatial extents.
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
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

namespace hn = hwy::HWY_NAMESPACE;

struct Shape {
  std::int64_t batch, in_channels, out_channels, height, width;
};
constexpr std::int64_t kKernel = 3;
constexpr std::int64_t kGroups = 16;
constexpr double kEps = 1e-5;

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {2, 5, 32, 11, 13};
    case Size::kCpu:
      return {12, 8, 64, 98, 98};
    case Size::kFull:
      break;
  }
  return {128, 8, 64, 128, 128};
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
                    {"groups", kGroups}};
  problem.inputs = {
      {{"x", KB_BF16, {n, ci, h, w}}, InitRule::uniform(0.0, 1.0)},
      {{"conv_weight", KB_BF16, {co, ci, kKernel, kKernel}}, InitRule::normal(0.02)},
      {{"conv_bias", KB_BF16, {co}}, InitRule::normal(0.02)},
      {{"gn_weight", KB_BF16, {co}}, InitRule::uniform(0.5, 1.5)},
      {{"gn_bias", KB_BF16, {co}}, InitRule::normal(0.1)},
  };
  problem.outputs = {{"out", KB_BF16, {n, 1, h - kKernel + 1, w - kKernel + 1}}};
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
  if (h < kKernel || w < kKernel || co % kGroups != 0 ||
      !ops::matches(in[0], KB_BF16, {n, ci, h, w}) ||
      !ops::matches(in[1], KB_BF16, {co, ci, kKernel, kKernel}) ||
      !ops::matches(in[2], KB_BF16, {co}) || !ops::matches(in[3], KB_BF16, {co}) ||
      !ops::matches(in[4], KB_BF16, {co}) ||
      !ops::is_float_output(out[0], {n, 1, h - kKernel + 1, w - kKernel + 1}))
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
  const std::size_t plane = plane_of(*s), channels = static_cast<std::size_t>(s->out_channels);
  const std::size_t per_group = channels / kGroups, group_size = per_group * plane;
  std::vector<double> residual(channels * plane);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t n = 0; n < static_cast<std::size_t>(s->batch); ++n) {
    double* sample = y.data() + n * channels * plane;
    for (std::size_t i = 0; i < channels * plane; ++i)
      sample[i] += bf16_to_f32(conv_bias[i / plane]);
    for (std::size_t g = 0; g < kGroups; ++g) {
      const double* v = sample + g * group_size;
      double mean = 0, var = 0;
      for (std::size_t i = 0; i < group_size; ++i) mean += v[i];
      mean /= static_cast<double>(group_size);
      for (std::size_t i = 0; i < group_size; ++i) var += (v[i] - mean) * (v[i] - mean);
      const double inv_std = 1.0 / std::sqrt(var / static_cast<double>(group_size) + kEps);
      for (std::size_t i = 0; i < group_size; ++i) {
        const std::size_t c = g * per_group + i / plane;
        const double t =
            std::tanh((v[i] - mean) * inv_std * bf16_to_f32(gamma[c]) + bf16_to_f32(beta[c]));
        residual[g * group_size + i] = v[i] + t * std::clamp(t + 3.0, 0.0, 6.0) / 6.0;
      }
    }
    for (std::size_t p = 0; p < plane; ++p) {
      double m = residual[p];
      for (std::size_t c = 1; c < channels; ++c) m = std::max(m, residual[c * plane + p]);
      double sum = 0;
      for (std::size_t c = 0; c < channels; ++c) sum += std::exp(residual[c * plane + p] - m);
      o[n * plane + p] = static_cast<float>(m + std::log(sum));
    }
  }
  return 0;
}

// The epilogue over one pixel's channel row (channels a multiple of the vector width, as 16 groups
// of f32 vectors always are): r = y + hardswish(tanh(scale * y + shift)), then logsumexp(r).
float epilogue_row(const float* y, const float* scale, const float* shift, std::size_t channels) {
  const hn::ScalableTag<float> df;
  const std::size_t lanes = hn::Lanes(df);
  constexpr std::size_t kMaxVectors = 64;  // up to 1024 channels with 16 lanes
  hn::Vec<decltype(df)> r[kMaxVectors];
  const std::size_t vectors = channels / lanes;
  auto max = hn::Set(df, -HUGE_VALF);
  for (std::size_t v = 0; v < vectors; ++v) {
    const auto yv = hn::LoadU(df, y + v * lanes);
    const auto t = hn::Tanh(
        df, hn::MulAdd(yv, hn::LoadU(df, scale + v * lanes), hn::LoadU(df, shift + v * lanes)));
    const auto relu6 =
        hn::Min(hn::Max(hn::Add(t, hn::Set(df, 3.0f)), hn::Zero(df)), hn::Set(df, 6.0f));
    r[v] = hn::Add(yv, hn::Mul(hn::Mul(t, relu6), hn::Set(df, 1.0f / 6.0f)));
    max = hn::Max(max, r[v]);
  }
  const auto m = hn::Set(df, hn::GetLane(hn::MaxOfLanes(df, max)));
  auto sum = hn::Zero(df);
  for (std::size_t v = 0; v < vectors; ++v) sum = hn::Add(sum, hn::Exp(df, hn::Sub(r[v], m)));
  return hn::GetLane(m) + std::log(hn::GetLane(hn::SumOfLanes(df, sum)));
}

// What a fusing compiler emits: per sample, the convolution with its bias fused, written
// channels-last f32 (pixel rows of channels); a channel-sum pass and a squared-deviation pass give
// the group statistics; one vectorized pass per pixel applies the norm, tanh, hardswish, residual
// and the channel logsumexp, storing one value per pixel.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s) return 1;
  const std::size_t plane = plane_of(*s), channels = static_cast<std::size_t>(s->out_channels);
  const std::size_t per_group = channels / kGroups;
  if (channels % hn::Lanes(hn::ScalableTag<float>()) != 0 || channels > 1024) return 1;
  const ops::F32Buffer conv_bias = ops::load_f32(in[2]);
  const ops::F32Buffer gamma = ops::load_f32(in[3]);
  const ops::F32Buffer beta = ops::load_f32(in[4]);
  // One sample at a time: its conv output (2.4 MB at the cpu size) stays cache-resident for the
  // three passes that read it, as a compiler tiling the program by sample would keep it.
  Shape one = *s;
  one.batch = 1;
  const std::size_t sample_in = static_cast<std::size_t>(s->in_channels * s->height * s->width);
  ops::F32Buffer y(plane * channels);
  std::vector<float> sums(channels), mean(channels), squares(channels), scale(channels),
      shift(channels);
  const double count = static_cast<double>(per_group * plane);
  for (std::size_t n = 0; n < static_cast<std::size_t>(s->batch); ++n) {
    ops::conv(geometry_of(one), static_cast<const bf16_t*>(in[0].data) + n * sample_in, KB_BF16,
              in[1].data, KB_BF16, y.data(), KB_F32, ops::ConvLayout::kChannelsLast,
              {conv_bias.data()});
    const float* sample = y.data();
    sums.assign(channels, 0.0f);
    ops::add_rows(sample, plane, channels, channels, sums.data());
    for (std::size_t g = 0; g < kGroups; ++g) {
      double group_sum = 0;
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c) group_sum += sums[c];
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c)
        mean[c] = static_cast<float>(group_sum / count);
    }
    squares.assign(channels, 0.0f);
    ops::add_squared_deviation_rows(sample, plane, channels, channels, mean.data(), squares.data());
    for (std::size_t g = 0; g < kGroups; ++g) {
      double group_squares = 0;
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c) group_squares += squares[c];
      const double inv_std = 1.0 / std::sqrt(group_squares / count + kEps);
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c) {
        scale[c] = static_cast<float>(gamma.data()[c] * inv_std);
        shift[c] = static_cast<float>(beta.data()[c] - mean[c] * gamma.data()[c] * inv_std);
      }
    }
    for (std::size_t p = 0; p < plane; ++p) {
      const float value = epilogue_row(sample + p * channels, scale.data(), shift.data(), channels);
      if (out[0].dtype == KB_BF16)
        static_cast<bf16_t*>(out[0].data)[n * plane + p] = f32_to_bf16(value);
      else
        static_cast<float*>(out[0].data)[n * plane + p] = value;
    }
  }
  return 0;
}

// The JAX program in bf16: the conv's bf16 result, + bias; group mean and variance accumulated in
// f32 and rounded; y - mean, var + eps, sqrt, the division, * weight, + bias, tanh, + 3, the
// product with relu6, / 6 and the residual add each rounded; logsumexp as jax writes it (max,
// r - max, exp, the f32-accumulated sum, log, + max), each rounded.
int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_BF16) return 1;
  const std::size_t plane = plane_of(*s), channels = static_cast<std::size_t>(s->out_channels);
  const std::size_t per_group = channels / kGroups, group_size = per_group * plane;
  ops::F32Buffer y(static_cast<std::size_t>(s->batch) * channels * plane);
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32,
            ops::ConvLayout::kPlain);
  const auto* conv_bias = static_cast<const bf16_t*>(in[2].data);
  const auto* gamma = static_cast<const bf16_t*>(in[3].data);
  const auto* beta = static_cast<const bf16_t*>(in[4].data);
  std::vector<float> residual(channels * plane);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t n = 0; n < static_cast<std::size_t>(s->batch); ++n) {
    float* sample = y.data() + n * channels * plane;
    for (std::size_t i = 0; i < channels * plane; ++i)
      sample[i] = round_to_bf16(round_to_bf16(sample[i]) + bf16_to_f32(conv_bias[i / plane]));
    for (std::size_t g = 0; g < kGroups; ++g) {
      const float* v = sample + g * group_size;
      const float mean_f32 = ops::sum_f32(v, group_size) / static_cast<float>(group_size);
      const float var = round_to_bf16(ops::sum_squared_deviations(v, group_size, mean_f32) /
                                      static_cast<float>(group_size));
      const float mean = round_to_bf16(mean_f32);
      const float denom = round_to_bf16(std::sqrt(round_to_bf16(var + static_cast<float>(kEps))));
      for (std::size_t i = 0; i < group_size; ++i) {
        const std::size_t c = g * per_group + i / plane;
        const float normalized = round_to_bf16(round_to_bf16(v[i] - mean) / denom);
        const float affine =
            round_to_bf16(round_to_bf16(normalized * bf16_to_f32(gamma[c])) + bf16_to_f32(beta[c]));
        const float t = round_to_bf16(std::tanh(affine));
        const float relu6 = std::clamp(round_to_bf16(t + 3.0f), 0.0f, 6.0f);
        const float hard_swish = round_to_bf16(round_to_bf16(t * relu6) / 6.0f);
        residual[g * group_size + i] = round_to_bf16(v[i] + hard_swish);
      }
    }
    for (std::size_t p = 0; p < plane; ++p) {
      float m = residual[p];
      for (std::size_t c = 1; c < channels; ++c) m = std::max(m, residual[c * plane + p]);
      float sum = 0;
      for (std::size_t c = 0; c < channels; ++c)
        sum += round_to_bf16(std::exp(round_to_bf16(residual[c * plane + p] - m)));
      o[n * plane + p] = f32_to_bf16(round_to_bf16(std::log(round_to_bf16(sum))) + m);
    }
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kConv2dGroupNormTanhHardSwishResidualAddLogSumExp46k;
const Workload kConv2dGroupNormTanhHardSwishResidualAddLogSumExp46k = {
    .id = "46k",
    .name = "46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem "
        "92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
    .summary = "logsumexp_c(y + hardswish(tanh(GroupNorm16(y)))), y = conv2d_3x3_valid(x) + bias",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    // JAXBench's allclose(atol=1e-2, rtol=1e-2), with rel-L2 <= 0.005 instead of 1e-2: the output
    // is log(64) ~ 4.2 plus a per-pixel variation of ~0.1-0.2, so rel-L2 against ||oracle|| of 1e-2
    // was looser than the variation itself (the oracle's mean scored 0.007, the samples rotated
    // 0.0098, both then caught only by allclose). 0.005 is twice the faithful bf16 program's worst
    // (0.0025 over 20 smoke + 3 cpu seeds).
    .tolerance = Tolerance{.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 0.005},
    .math = MathClass::kBf16Matmul,
    .bf16_program = bf16_program,
};

}  // namespace kbench
