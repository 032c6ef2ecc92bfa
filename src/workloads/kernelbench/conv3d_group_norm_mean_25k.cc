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
//           beta       bf16 (Cout)               normal(0,1)  (original: normal*0.02)
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
//   - beta normal(0, 1) instead of normal*0.02: the output takes beta only as mean(beta), ~0.004
//     with the original's scale, and an output computed without it (at 0) stayed inside the rule
//     (0.08 of the bound at the worst of 10 smoke seeds, 0.63 of 2 cpu seeds); now 2.6 and 33.
//     A seed whose mean(beta) lies near 0 still hides it, so a kernel that drops beta is caught on
//     most calls, not on every one.
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "scaffolds.h"
#include "workloads/kit/conv_layer.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using Shape = conv_kit::Shape3d;
constexpr std::int64_t kKernel = 3;
constexpr std::int64_t kGroups = 8;
constexpr double kEps = 1e-5;

constexpr Presets<Shape> kPresets = {
    // A batch of 64: the rel-L2 of the bf16 program over few per-sample residues has a long
    // tail (over 5 it reached 1.26 of the bound in 60 seeds; over 21, 0.0326 in 20,000 seeds;
    // over 64, 0.0255).
    .smoke = {64, 3, 24, 5, 7, 9},
    .cpu = {12, 3, 24, 24, 32, 32},
    .full = {128, 3, 24, 24, 32, 32},
};

constexpr auto geometry_of = conv_kit::valid_geometry<kKernel, Shape>;

// (N): one mean per sample.
std::vector<std::int64_t> means_extents(const ops::ConvGeometry& g) {
  return {g.batch};
}

Problem make_problem(Size size) {
  const ops::ConvGeometry g = geometry_of(kPresets.at(size));
  Problem problem =
      conv_kit::problem(g, InitRule::structured(ops::fill_uniform_with_channel_offsets), "weight",
                        InitRule::normal(0.02));
  problem.config.push_back({"num_groups", kGroups});
  conv_kit::add_vectors(problem, g.out_channels,
                        {{"conv_bias", InitRule::normal(0.02)},
                         {"gamma", InitRule::normal(1.0)},
                         {"beta", InitRule::normal(1.0)}});
  return conv_kit::with_output(std::move(problem), means_extents(g));
}

constexpr auto shape_of_call =
    conv_kit::shape_of_call<Shape, geometry_of, 3, means_extents, kGroups>;

int reference(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry geometry = geometry_of(s);
  const std::vector<double> y = conv_kit::reference(geometry, in[0], in[1], in[2]);
  const std::size_t volume = conv_kit::output_plane(geometry);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  double total = 0;
  conv_kit::reference_group_norm(
      geometry, y, kGroups, kEps, in[3], in[4],
      [&](std::size_t, std::size_t, double, double normed) { total += normed; },
      [&](std::size_t n) {
        static_cast<float*>(out[0].data)[n] =
            static_cast<float>(total / static_cast<double>(channels * volume));
        total = 0;
      });
  return 0;
}

// What a fusing compiler emits: per sample, the convolution with its bias fused, written
// channels-last f32 (oneDNN writes it directly; a plain NCDHW result costs a reorder as long as
// the conv at these channel counts); one pass for the channel sums and one for the squared
// deviations from each channel's group mean, both vectorized across the channels of each voxel; the
// final mean reduces the normalized values channel by channel, sum_i (a v_i + b) = a sum_i v_i + n
// b with a = gamma / sigma and b = beta - a mu, so the normalized tensor is never stored.
int baseline(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry geometry = geometry_of(s);
  const std::size_t volume = conv_kit::output_plane(geometry);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  const std::size_t per_group = channels / kGroups;
  const auto [conv_bias, gamma, beta] = conv_kit::load_bias_and_affine(in);
  // One sample at a time: its conv output (1.9 MB) stays cache-resident for the two passes.
  ops::F32Buffer y(channels * volume);
  ops::ChannelGroupStats stats;
  for (std::size_t n = 0; n < static_cast<std::size_t>(s.batch); ++n) {
    conv_kit::conv_sample(geometry, in[0], in[1], n, y.data(), ops::ConvLayout::kChannelsLast,
                          {conv_bias.data()});
    ops::channel_group_stats(y.data(), volume, channels, kGroups, kEps, stats);
    double total = 0;
    for (std::size_t c = 0; c < channels; ++c)
      total += gamma.data()[c] * stats.inv_std[c / per_group] *
                   (stats.sums[c] - stats.mean[c] * static_cast<double>(volume)) +
               beta.data()[c] * static_cast<double>(volume);
    conv_kit::store(out[0], n, static_cast<float>(total / static_cast<double>(channels * volume)));
  }
  return 0;
}

// The JAX program in bf16: the conv's bf16 result, + bias; group mean and variance accumulated in
// f32 (jnp.mean/jnp.var upcast bf16) and rounded to bf16; y - mean, var + eps, sqrt, the division,
// * gamma, + beta each rounded; the final mean accumulated in f32 and rounded.
int bf16_program(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry geometry = geometry_of(s);
  const std::size_t volume = conv_kit::output_plane(geometry);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  ops::F32Buffer y = conv_kit::bf16_conv_bias(geometry, in[0], in[1], in[2]);
  float total = 0;
  conv_kit::bf16_group_norm(
      geometry, y, kGroups, kEps, in[3], in[4],
      [](std::size_t, std::size_t, float& v, float affine) { v = affine; },
      [&](const float* v, std::size_t count) { total += ops::sum_f32(v, count); },
      [&](std::size_t n) {
        static_cast<bf16_t*>(out[0].data)[n] =
            f32_to_bf16(total / static_cast<float>(channels * volume));
        total = 0;
      });
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kConv3dGroupNormMean25k = with_programs<Programs>({
    .name = "25k_Conv3d_GroupNorm_Mean",
    .kernelbench_problem = 23,
    .summary = "mean_cdhw(GroupNorm8(conv3d_3x3x3_valid(x, weight) + conv_bias)) on bf16 -> (N)",
    .problem = make_problem,
    // JAXBench's allclose(atol=1e-2, rtol=1e-2), with rel-L2 <= 0.035 instead of 1e-2: the output
    // is the ~0.2 contrast left after each group's normalized values cancel, so the faithful bf16
    // program's roundings of the group statistics, the normalized values and the final mean
    // (~1e-3 absolute) are 0.5-1.4% of it, more where a seed's gamma leaves a small contrast: over
    // 20,000 smoke seeds its rel-L2 reached 0.0255 (0.73 of the bound; 0.0096 over 30 cpu seeds).
    // beta normal(0, 1) (Deviations) adds mean(beta) to the output and nothing to that error: then
    // 0.0200 over 20,000 smoke seeds and 0.0092 over 30 cpu seeds. 5% RMS noise (rel-L2 0.05)
    // stays 1.4x or more over the bound at smoke and cpu size (12 samples).
    .tolerance = Tolerance{.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 0.035},
    .scaffold = scaffolds::k25k_Conv3d_GroupNorm_Mean,
});

}  // namespace kbench
