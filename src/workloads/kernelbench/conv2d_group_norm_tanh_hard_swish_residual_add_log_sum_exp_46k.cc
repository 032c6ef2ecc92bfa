// 46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp: KernelBench level 2 problem 92
// (PyTorch, translated to JAX): a 3x3 VALID convolution with bias, GroupNorm, tanh, hardswish, a
// residual add of the conv output, then logsumexp over the channels.
//
// Operator  y = conv2d(x, conv_weight) + conv_bias[c];
//           g = (y - mean_g(y)) / sqrt(var_g(y) + 1e-5) * gn_weight[c] + gn_bias[c], statistics
//           over each group of C/16 channels and all of H, W (16 groups);
//           t = tanh(g);  h = t * relu6(t + 3) / 6;  out[n, 0, i, j] = logsumexp_c(y + h).
// Inputs    x            bf16 (N, Cin, H, W)    uniform[0,1)
//           conv_weight  bf16 (Cout, Cin, 3, 3) normal*0.1        (original: normal*0.02)
//           conv_bias    bf16 (Cout)            normal*0.5        (original: normal*0.02)
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
//     identity that a kernel could skip unnoticed). Even so their absence stays within the rule
//     (inputs_below_rule): h is bounded by the tanh and enters a log-sum-exp over 64 channels, so
//     an output with gn_bias at 0 uses 0.29-0.39 of the bound and one with gn_weight at 1 0.47-0.59
//     (10 smoke seeds, 2 cpu seeds), and wider draws do not lift them clear (gn_bias normal(1),
//     gn_weight uniform[0,2): 1.0-1.2 and 0.9-1.7). Leaving them out saves no work.
//   - conv_weight normal*0.1 and conv_bias normal*0.5 instead of normal*0.02: with the original's
//     scales the output was log(64) plus a per-pixel variation of ~0.1-0.2, and an output computed
//     with the convolution's weights at zero was only ~3x outside the rule, with its bias at zero
//     inside it (0.49 of the bound). Now 5.2x and 3.0x at smoke, 10x and 4.7x at cpu size.
//   - The cpu preset is (N, H, W) = (12, 98, 98) with the original's channels and kernel
//     (1.0 GFLOP). Smoke uses Cin = 5, Cout = 32 (16 groups of 2) and odd spatial extents.
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "ops/transpose.h"
#include "ops/xla_tanh-inl.h"
#include "scaffolds.h"
#include "workloads/kit/conv_layer.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr std::string_view kInputsBelowRule[] = {"gn_weight", "gn_bias"};

namespace hn = hwy::HWY_NAMESPACE;

using Shape = conv_kit::Shape2d;
constexpr std::int64_t kKernel = 3;
constexpr std::int64_t kGroups = 16;
constexpr double kEps = 1e-5;

constexpr Presets<Shape> kPresets = {
    .smoke = {2, 5, 32, 11, 13},
    .cpu = {12, 8, 64, 98, 98},
    .full = {128, 8, 64, 128, 128},
};

constexpr auto geometry_of = conv_kit::valid_geometry<kKernel, Shape>;

// (N, 1, Ho, Wo): the conv output with its channels reduced.
std::vector<std::int64_t> pooled_extents(const ops::ConvGeometry& g) {
  std::vector<std::int64_t> extents = conv_kit::output_extents(g);
  extents[1] = 1;
  return extents;
}

Problem make_problem(Size size) {
  const ops::ConvGeometry g = geometry_of(kPresets.at(size));
  Problem problem =
      conv_kit::problem(g, InitRule::uniform(0.0, 1.0), "conv_weight", InitRule::normal(0.1));
  problem.config.push_back({"groups", kGroups});
  conv_kit::add_vectors(problem, g.out_channels,
                        {{"conv_bias", InitRule::normal(0.5)},
                         {"gn_weight", InitRule::uniform(0.5, 1.5)},
                         {"gn_bias", InitRule::normal(0.1)}});
  return conv_kit::with_output(std::move(problem), pooled_extents(g));
}

constexpr auto shape_of_call =
    conv_kit::shape_of_call<Shape, geometry_of, 3, pooled_extents, kGroups>;

int reference(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry geometry = geometry_of(s);
  const std::vector<double> y = conv_kit::reference(geometry, in[0], in[1], in[2]);
  const std::size_t plane = conv_kit::output_plane(geometry);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  std::vector<double> residual(channels * plane);
  auto* o = static_cast<float*>(out[0].data);
  conv_kit::reference_group_norm(
      geometry, y, kGroups, kEps, in[3], in[4],
      [&](std::size_t, std::size_t j, double v, double normed) {
        const double t = std::tanh(normed);
        residual[j] = v + t * std::clamp(t + 3.0, 0.0, 6.0) / 6.0;
      },
      [&](std::size_t n) {
        for (std::size_t p = 0; p < plane; ++p) {
          double m = residual[p];
          for (std::size_t c = 1; c < channels; ++c) m = std::max(m, residual[c * plane + p]);
          double sum = 0;
          for (std::size_t c = 0; c < channels; ++c) sum += std::exp(residual[c * plane + p] - m);
          o[n * plane + p] = static_cast<float>(m + std::log(sum));
        }
      });
  return 0;
}

// r = y + hardswish(tanh(scale * y + shift)) over lanes: the elementwise part of the epilogue.
template <class D, class V>
V residual_lanes(D d, V y, V scale, V shift) {
  const V t = ops::xla_tanh(d, hn::MulAdd(y, scale, shift));
  const V relu6 = hn::Min(hn::Max(hn::Add(t, hn::Set(d, 3.0f)), hn::Zero(d)), hn::Set(d, 6.0f));
  return hn::Add(y, hn::Mul(hn::Mul(t, relu6), hn::Set(d, 1.0f / 6.0f)));
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
    r[v] = residual_lanes(df, hn::LoadU(df, y + v * lanes), hn::LoadU(df, scale + v * lanes),
                          hn::LoadU(df, shift + v * lanes));
    max = hn::Max(max, r[v]);
  }
  const auto m = hn::Set(df, hn::GetLane(hn::MaxOfLanes(df, max)));
  auto sum = hn::Zero(df);
  for (std::size_t v = 0; v < vectors; ++v) sum = hn::Add(sum, hn::Exp(df, hn::Sub(r[v], m)));
  return hn::GetLane(m) + std::log(hn::GetLane(hn::SumOfLanes(df, sum)));
}

// The same epilogue for one vector's width of consecutive pixels at once: their channel rows
// transposed in L1 (ops::transpose) so that each channel is one vector across the pixels, and the
// max, the sum of exps and the log run down the channels lane by lane, without a reduction across
// lanes or a scalar log per pixel. `r` is scratch of channels x lanes values.
void epilogue_pixels(const float* y, const float* scale, const float* shift, std::size_t channels,
                     float* r, float* out) {
  const hn::ScalableTag<float> df;
  const std::size_t lanes = hn::Lanes(df);
  ops::transpose(y, static_cast<std::int64_t>(channels), r, static_cast<std::int64_t>(lanes),
                 static_cast<std::int64_t>(lanes), static_cast<std::int64_t>(channels),
                 sizeof(float));
  auto max = hn::Set(df, -HUGE_VALF);
  for (std::size_t c = 0; c < channels; ++c) {
    const auto residual = residual_lanes(df, hn::LoadU(df, r + c * lanes), hn::Set(df, scale[c]),
                                         hn::Set(df, shift[c]));
    hn::StoreU(residual, df, r + c * lanes);
    max = hn::Max(max, residual);
  }
  auto sum = hn::Zero(df);
  for (std::size_t c = 0; c < channels; ++c)
    sum = hn::Add(sum, hn::Exp(df, hn::Sub(hn::LoadU(df, r + c * lanes), max)));
  hn::StoreU(hn::Add(max, hn::Log(df, sum)), df, out);
}

// What a fusing compiler emits: per sample, the convolution with its bias fused, written
// channels-last f32 (pixel rows of channels); a channel-sum pass and a squared-deviation pass give
// the group statistics; one vectorized pass over blocks of a vector's width of pixels applies the
// norm, tanh, hardswish, residual and the channel logsumexp, storing one value per pixel.
int baseline(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry geometry = geometry_of(s);
  const std::size_t plane = conv_kit::output_plane(geometry);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  const std::size_t per_group = channels / kGroups;
  if (channels % hn::Lanes(hn::ScalableTag<float>()) != 0 || channels > 1024) return 1;
  const auto [conv_bias, gamma, beta] = conv_kit::load_bias_and_affine(in);
  // One sample at a time: its conv output (2.4 MB at the cpu size) stays cache-resident for the
  // three passes that read it, as a compiler tiling the program by sample would keep it.
  ops::F32Buffer y(plane * channels);
  ops::ChannelGroupStats stats;
  std::vector<float> scale(channels), shift(channels);
  for (std::size_t n = 0; n < static_cast<std::size_t>(s.batch); ++n) {
    conv_kit::conv_sample(geometry, in[0], in[1], n, y.data(), ops::ConvLayout::kChannelsLast,
                          {conv_bias.data()});
    ops::channel_group_stats(y.data(), plane, channels, kGroups, kEps, stats);
    for (std::size_t c = 0; c < channels; ++c) {
      const double inv_std = stats.inv_std[c / per_group];
      scale[c] = static_cast<float>(gamma.data()[c] * inv_std);
      shift[c] = static_cast<float>(beta.data()[c] - stats.mean[c] * gamma.data()[c] * inv_std);
    }
    // The tanh and exp of every element are most of the run: blocks of a vector's width of
    // pixels are split over the threads; the pixels past the last whole block go one by one.
    const std::size_t lanes = hn::Lanes(hn::ScalableTag<float>());
    const std::size_t blocks = plane / lanes;
#pragma omp parallel
    {
      std::vector<float> r(channels * lanes), values(lanes);
#pragma omp for schedule(static)
      for (std::size_t b = 0; b < blocks; ++b) {
        epilogue_pixels(y.data() + b * lanes * channels, scale.data(), shift.data(), channels,
                        r.data(), values.data());
        for (std::size_t t = 0; t < lanes; ++t)
          conv_kit::store(out[0], n * plane + b * lanes + t, values[t]);
      }
    }
    for (std::size_t p = blocks * lanes; p < plane; ++p)
      conv_kit::store(out[0], n * plane + p,
                      epilogue_row(y.data() + p * channels, scale.data(), shift.data(), channels));
  }
  return 0;
}

// The JAX program in bf16: the conv's bf16 result, + bias; group mean and variance accumulated in
// f32 and rounded; y - mean, var + eps, sqrt, the division, * weight, + bias, tanh, + 3, the
// product with relu6, / 6 and the residual add each rounded; logsumexp as jax writes it (max,
// r - max, exp, the f32-accumulated sum, log, + max), each rounded.
int bf16_program(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry geometry = geometry_of(s);
  const std::size_t plane = conv_kit::output_plane(geometry);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  ops::F32Buffer y = conv_kit::bf16_conv_bias(geometry, in[0], in[1], in[2]);
  std::vector<float> residual(channels * plane);
  auto* o = static_cast<bf16_t*>(out[0].data);
  conv_kit::bf16_group_norm(
      geometry, y, kGroups, kEps, in[3], in[4],
      [&](std::size_t, std::size_t j, float v, float affine) {
        const float t = round_to_bf16(std::tanh(affine));
        const float relu6 = std::clamp(round_to_bf16(t + 3.0f), 0.0f, 6.0f);
        const float hard_swish = round_to_bf16(round_to_bf16(t * relu6) / 6.0f);
        residual[j] = round_to_bf16(v + hard_swish);
      },
      [](const float*, std::size_t) {},
      [&](std::size_t n) {
        for (std::size_t p = 0; p < plane; ++p) {
          float m = residual[p];
          for (std::size_t c = 1; c < channels; ++c) m = std::max(m, residual[c * plane + p]);
          float sum = 0;
          for (std::size_t c = 0; c < channels; ++c)
            sum += round_to_bf16(std::exp(round_to_bf16(residual[c * plane + p] - m)));
          o[n * plane + p] = f32_to_bf16(round_to_bf16(std::log(round_to_bf16(sum))) + m);
        }
      });
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kConv2dGroupNormTanhHardSwishResidualAddLogSumExp46k = with_programs<Programs>({
    .name = "46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
    .kernelbench_problem = 92,
    .summary = "logsumexp_c(y + hardswish(tanh(GroupNorm16(y)))), y = conv2d_3x3_valid(x) + bias",
    .problem = make_problem,
    // JAXBench's allclose(atol=1e-2, rtol=1e-2), with rel-L2 <= 0.005 instead of 1e-2: the output
    // is log(64) ~ 4.2 plus a per-pixel variation (~0.1-0.2 with the original's conv scales), so
    // rel-L2 against ||oracle|| of 1e-2 was looser than the variation itself (the oracle's mean
    // scored 0.007, the samples rotated 0.0098, both then caught only by allclose; with the scales
    // of Deviations 0.012-0.025 and 0.018-0.040). 0.005 is twice the faithful bf16 program's worst
    // (0.0025 over 20 smoke + 3 cpu seeds, with either scales).
    .tolerance = Tolerance{.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 0.005},
    .inputs_below_rule = kInputsBelowRule,
    .scaffold = scaffolds::k46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp,
});

}  // namespace kbench
