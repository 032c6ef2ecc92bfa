// 25k_Conv3d_GroupNorm_Mean: KernelBench level 2 problem 23 (PyTorch, translated to JAX): a 3x3x3
// VALID 3-D convolution with bias, GroupNorm, then the mean of each sample's normalized output.
//
// Operator  y = conv3d(x, weight) + conv_bias[c];
//           g = (y - mean_g(y)) / sqrt(var_g(y) + 1e-5) * gamma[c] + beta[c], statistics over each
//           group of C/8 channels and all of D, H, W (8 groups);
//           out[n] = mean over (C, D, H, W) of g[n].
// Inputs    x          bf16 (N, Cin, D, H, W)    uniform[0,1) + a per-(sample, channel) offset
//                                                normal(0,1) (see Deviations)
//           weight     bf16 (Cout, Cin, 3, 3, 3) normal*0.02
//           conv_bias  bf16 (Cout)               normal*0.02
//           gamma      bf16 (Cout)               normal(0,1)  (original: ones, see Deviations)
//           beta       bf16 (Cout)               normal*0.02
// Output    out        bf16 (N)
// FLOPs     2*N*Cout*Do*Ho*Wo*Cin*27 (the norm and mean are not counted); 9,853,747,200 at full
//           size (N=128, Cin=3, Cout=24, D=24, H=W=32).
// Character a 3-D convolution with a very short reduction (K = Cin*27 = 81) feeding reductions:
//           every output value is needed only through per-channel sums, so nothing but the conv's
//           output stream and its three passes are memory traffic.
// Deviations (the original is degenerate, spec caveat; fixed minimally)
//   - gamma is normal(0,1) instead of ones: with gamma = 1 the mean of a group-normalized tensor
//     is exactly mean(beta) whatever x is (each group's normalized values sum to zero), so the
//     output did not depend on x or the conv at all. With any gamma the output is
//     mean(beta) + sum_c gamma_c m_c / C, m_c channel c's normalized mean (zero summed over a
//     group); a zero-mean gamma makes that contrast the whole signal, where gamma ~ 1 + noise
//     would add sum_g 3 e_g (e_g the bf16 program's rounding of group g's mean, 2^-9 relative)
//     coherently and measured up to 1.7% rel-L2 error for the faithful bf16 program.
//   - x gets one offset per (sample, channel), normal(0,1), on top of the original's
//     uniform[0,1): with iid inputs every sample's output is the same to ~1e-3 (averages over
//     ~20K voxels), so an output with the samples permuted passed.
//   - The cpu preset is (N, D, H, W) = (12, 24, 32, 32): the original's channels, kernel and
//     volume, fewer samples (0.92 GFLOP). Smoke keeps the channels (24 = 8 groups of 3) with odd
//     spatial extents.
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
  std::int64_t batch, in_channels, out_channels, depth, height, width;
};
constexpr std::int64_t kKernel = 3;
constexpr std::int64_t kGroups = 8;
constexpr double kEps = 1e-5;

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      // A batch of 21: the rel-L2 of the bf16 program over only 5 per-sample residues reached 1.26
      // of the bound over 60 seeds; over 21 it stays near 0.55 (kbench validate --seeds 60).
      return {21, 3, 24, 5, 7, 9};
    case Size::kCpu:
      return {12, 3, 24, 24, 32, 32};
    case Size::kFull:
      break;
  }
  return {128, 3, 24, 24, 32, 32};
}

ops::ConvGeometry geometry_of(const Shape& s) {
  return {s.batch,
          s.in_channels,
          s.out_channels,
          {s.depth, s.height, s.width},
          {kKernel, kKernel, kKernel}};
}

Problem make_problem(Size size) {
  const Shape s = shape_of(size);
  const auto [n, ci, co, d, h, w] = s;
  Problem problem;
  problem.config = {{"batch_size", n},
                    {"in_channels", ci},
                    {"out_channels", co},
                    {"kernel_size", kKernel},
                    {"num_groups", kGroups}};
  problem.inputs = {
      {{"x", KB_BF16, {n, ci, d, h, w}},
       InitRule::structured(ops::fill_uniform_with_channel_offsets)},
      {{"weight", KB_BF16, {co, ci, kKernel, kKernel, kKernel}}, InitRule::normal(0.02)},
      {{"conv_bias", KB_BF16, {co}}, InitRule::normal(0.02)},
      {{"gamma", KB_BF16, {co}}, InitRule::normal(1.0)},
      {{"beta", KB_BF16, {co}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {n}}};
  problem.flops = ops::conv_direct_flops(geometry_of(s));
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 5 || num_outputs != 1 || in[0].rank != 5 || in[1].rank != 5)
    return std::nullopt;
  const Shape s{in[0].shape[0], in[0].shape[1], in[1].shape[0],
                in[0].shape[2], in[0].shape[3], in[0].shape[4]};
  const auto [n, ci, co, d, h, w] = s;
  if (d < kKernel || h < kKernel || w < kKernel || co % kGroups != 0 ||
      !ops::matches(in[0], KB_BF16, {n, ci, d, h, w}) ||
      !ops::matches(in[1], KB_BF16, {co, ci, kKernel, kKernel, kKernel}) ||
      !ops::matches(in[2], KB_BF16, {co}) || !ops::matches(in[3], KB_BF16, {co}) ||
      !ops::matches(in[4], KB_BF16, {co}) || !ops::is_float_output(out[0], {n}))
    return std::nullopt;
  return s;
}

std::size_t volume_of(const Shape& s) {
  return static_cast<std::size_t>((s.depth - kKernel + 1) * (s.height - kKernel + 1) *
                                  (s.width - kKernel + 1));
}

void store(kb_tensor& out, std::size_t i, float value) {
  if (out.dtype == KB_BF16)
    static_cast<bf16_t*>(out.data)[i] = f32_to_bf16(value);
  else
    static_cast<float*>(out.data)[i] = value;
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
  const std::size_t volume = volume_of(*s), channels = static_cast<std::size_t>(s->out_channels);
  const std::size_t per_group = channels / kGroups, group_size = per_group * volume;
  for (std::size_t n = 0; n < static_cast<std::size_t>(s->batch); ++n) {
    double total = 0;
    for (std::size_t g = 0; g < kGroups; ++g) {
      double* v = y.data() + (n * channels + g * per_group) * volume;
      double mean = 0, var = 0;
      for (std::size_t i = 0; i < group_size; ++i)
        mean += v[i] += bf16_to_f32(conv_bias[g * per_group + i / volume]);
      mean /= static_cast<double>(group_size);
      for (std::size_t i = 0; i < group_size; ++i) var += (v[i] - mean) * (v[i] - mean);
      const double inv_std = 1.0 / std::sqrt(var / static_cast<double>(group_size) + kEps);
      for (std::size_t i = 0; i < group_size; ++i) {
        const std::size_t c = g * per_group + i / volume;
        total += (v[i] - mean) * inv_std * bf16_to_f32(gamma[c]) + bf16_to_f32(beta[c]);
      }
    }
    static_cast<float*>(out[0].data)[n] =
        static_cast<float>(total / static_cast<double>(channels * volume));
  }
  return 0;
}

// What a fusing compiler emits: per sample, the convolution with its bias fused, written
// channels-last f32 (oneDNN writes it directly; a plain NCDHW result costs a reorder as long as
// the conv at these channel counts); one pass for the channel sums and one for the squared
// deviations from each channel's group mean, both vectorized across the channels of each voxel; the
// final mean reduces the normalized values channel by channel, sum_i (a v_i + b) = a sum_i v_i + n
// b with a = gamma / sigma and b = beta - a mu, so the normalized tensor is never stored.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s) return 1;
  const std::size_t volume = volume_of(*s), channels = static_cast<std::size_t>(s->out_channels);
  const std::size_t per_group = channels / kGroups;
  const ops::F32Buffer conv_bias = ops::load_f32(in[2]);
  const ops::F32Buffer gamma = ops::load_f32(in[3]);
  const ops::F32Buffer beta = ops::load_f32(in[4]);
  // One sample at a time: its conv output (1.9 MB) stays cache-resident for the two passes.
  Shape one = *s;
  one.batch = 1;
  const std::size_t sample_in =
      static_cast<std::size_t>(s->in_channels * s->depth * s->height * s->width);
  ops::F32Buffer y(channels * volume);
  std::vector<float> sums(channels), mean(channels), squares(channels);
  const double count = static_cast<double>(per_group * volume);
  for (std::size_t n = 0; n < static_cast<std::size_t>(s->batch); ++n) {
    ops::conv(geometry_of(one), static_cast<const bf16_t*>(in[0].data) + n * sample_in, KB_BF16,
              in[1].data, KB_BF16, y.data(), KB_F32, ops::ConvLayout::kChannelsLast,
              {conv_bias.data()});
    const float* sample = y.data();
    sums.assign(channels, 0.0f);
    ops::add_rows(sample, volume, channels, channels, sums.data());
    for (std::size_t g = 0; g < kGroups; ++g) {
      double group_sum = 0;
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c) group_sum += sums[c];
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c)
        mean[c] = static_cast<float>(group_sum / count);
    }
    squares.assign(channels, 0.0f);
    ops::add_squared_deviation_rows(sample, volume, channels, channels, mean.data(),
                                    squares.data());
    double total = 0;
    for (std::size_t g = 0; g < kGroups; ++g) {
      double group_squares = 0;
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c) group_squares += squares[c];
      const double inv_std = 1.0 / std::sqrt(group_squares / count + kEps);
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c)
        total += gamma.data()[c] * inv_std * (sums[c] - mean[c] * static_cast<double>(volume)) +
                 beta.data()[c] * static_cast<double>(volume);
    }
    store(out[0], n, static_cast<float>(total / static_cast<double>(channels * volume)));
  }
  return 0;
}

// The JAX program in bf16: the conv's bf16 result, + bias; group mean and variance accumulated in
// f32 (jnp.mean/jnp.var upcast bf16) and rounded to bf16; y - mean, var + eps, sqrt, the division,
// * gamma, + beta each rounded; the final mean accumulated in f32 and rounded.
int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_BF16) return 1;
  const std::size_t volume = volume_of(*s), channels = static_cast<std::size_t>(s->out_channels);
  const std::size_t per_group = channels / kGroups, group_size = per_group * volume;
  ops::F32Buffer y(static_cast<std::size_t>(s->batch) * channels * volume);
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32,
            ops::ConvLayout::kPlain);
  const auto* conv_bias = static_cast<const bf16_t*>(in[2].data);
  const auto* gamma = static_cast<const bf16_t*>(in[3].data);
  const auto* beta = static_cast<const bf16_t*>(in[4].data);
  for (std::size_t n = 0; n < static_cast<std::size_t>(s->batch); ++n) {
    float total = 0;
    for (std::size_t g = 0; g < kGroups; ++g) {
      float* v = y.data() + (n * channels + g * per_group) * volume;
      for (std::size_t i = 0; i < group_size; ++i)
        v[i] =
            round_to_bf16(round_to_bf16(v[i]) + bf16_to_f32(conv_bias[g * per_group + i / volume]));
      const float mean_f32 = ops::sum_f32(v, group_size) / static_cast<float>(group_size);
      const float var = round_to_bf16(ops::sum_squared_deviations(v, group_size, mean_f32) /
                                      static_cast<float>(group_size));
      const float mean = round_to_bf16(mean_f32);
      const float denom = round_to_bf16(std::sqrt(round_to_bf16(var + static_cast<float>(kEps))));
      for (std::size_t i = 0; i < group_size; ++i) {
        const std::size_t c = g * per_group + i / volume;
        const float normalized = round_to_bf16(round_to_bf16(v[i] - mean) / denom);
        v[i] =
            round_to_bf16(round_to_bf16(normalized * bf16_to_f32(gamma[c])) + bf16_to_f32(beta[c]));
      }
      total += ops::sum_f32(v, group_size);
    }
    static_cast<bf16_t*>(out[0].data)[n] =
        f32_to_bf16(total / static_cast<float>(channels * volume));
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kConv3dGroupNormMean25k;
const Workload kConv3dGroupNormMean25k = {
    .id = "25k",
    .name = "25k_Conv3d_GroupNorm_Mean",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem 23_Conv3d_GroupNorm_Mean",
    .summary = "mean_cdhw(GroupNorm8(conv3d_3x3x3_valid(x, weight) + conv_bias)) on bf16 -> (N)",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    // JAXBench's allclose(atol=1e-2, rtol=1e-2), with rel-L2 <= 0.025 instead of 1e-2: the output
    // is the ~0.2 contrast left after each group's normalized values cancel, so the faithful bf16
    // program's roundings of the group statistics, the normalized values and the final mean
    // (~1e-3 absolute) are 0.5-1.4% of it (measured rel-L2 up to 0.014 over 20 smoke seeds, 0.005
    // at cpu size). 5% RMS noise (rel-L2 0.05) stays 2x over the bound.
    .tolerance = Tolerance{.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 0.025},
    .math = MathClass::kBf16Matmul,
    .bf16_program = bf16_program,
};

}  // namespace kbench
