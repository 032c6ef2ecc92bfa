// 34k_Conv2d_Activation_BatchNorm: KernelBench level 2 problem 52 (PyTorch, translated to JAX): a
// 3x3 VALID convolution with bias, mish, then BatchNorm2d in training mode (batch statistics).
//
// Operator  y = conv2d(x, conv_weight) + conv_bias[c];  a = tanh(softplus(y)) * y  (mish);
//           out = (a - mean_nhw(a)) / sqrt(var_nhw(a) + 1e-5) * bn_weight[c] + bn_bias[c],
//           mean and biased variance per channel over (N, H, W): the batch's own statistics.
// Inputs    x            bf16 (N, Cin, H, W)    uniform[0,1)
//           conv_weight  bf16 (Cout, Cin, 3, 3) normal (unscaled)
//           conv_bias    bf16 (Cout)            normal (unscaled)
//           bn_weight    bf16 (Cout)            uniform[0.5,1.5)  (original: ones, see Deviations)
//           bn_bias      bf16 (Cout)            normal*0.1        (original: zeros)
// Output    out          bf16 (N, Cout, H-2, W-2)
// FLOPs     2*N*Cout*Ho*Wo*Cin*3*3 (mish and the norm are not counted); 149,824,733,184 at full
//           size (N=64, Cin=64, Cout=128, H=W=128).
// Character compute-bound convolution whose mish fuses into the output tiles; the batch statistics
//           need the whole output before any element can be normalized (a second pass over it).
// Deviations
//   - bn_weight and bn_bias are non-trivial (the original's ones and zeros make the affine step an
//     identity that a kernel could skip unnoticed).
//   - The cpu preset is (N, H, W) = (4, 82, 82) with the original's channels and kernel
//     (3.8 GFLOP). Smoke uses odd channel counts (13 -> 19) and spatial extents.
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
constexpr double kEps = 1e-5;

constexpr Presets<Shape> kPresets = {
    .smoke = {2, 13, 19, 11, 13},
    .cpu = {4, 64, 128, 82, 82},
    .full = {64, 64, 128, 128, 128},
};

constexpr auto geometry_of = conv_kit::valid_geometry<kKernel, Shape>;

Problem make_problem(Size size) {
  const ops::ConvGeometry g = geometry_of(kPresets.at(size));
  Problem problem =
      conv_kit::problem(g, InitRule::uniform(0.0, 1.0), "conv_weight", InitRule::normal(1.0));
  conv_kit::add_vectors(problem, g.out_channels,
                        {{"conv_bias", InitRule::normal(1.0)},
                         {"bn_weight", InitRule::uniform(0.5, 1.5)},
                         {"bn_bias", InitRule::normal(0.1)}});
  return conv_kit::with_output(std::move(problem), conv_kit::output_extents(g));
}

constexpr auto shape_of_call = conv_kit::shape_of_call<Shape, geometry_of, 3>;

double softplus(double y) {
  return y > 0 ? y + std::log1p(std::exp(-y)) : std::log1p(std::exp(y));
}

int reference(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  std::vector<double> a = conv_kit::reference(g, in[0], in[1], in[2]);
  const auto* gamma = static_cast<const bf16_t*>(in[3].data);
  const auto* beta = static_cast<const bf16_t*>(in[4].data);
  const std::size_t plane = conv_kit::output_plane(g);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  std::vector<double> mean(channels, 0.0), var(channels, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double y = a[i];
    a[i] = std::tanh(softplus(y)) * y;
    mean[i / plane % channels] += a[i];
  }
  const double count = static_cast<double>(a.size() / channels);
  for (double& m : mean) m /= count;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::size_t c = i / plane % channels;
    var[c] += (a[i] - mean[c]) * (a[i] - mean[c]);
  }
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::size_t c = i / plane % channels;
    o[i] = static_cast<float>((a[i] - mean[c]) / std::sqrt(var[c] / count + kEps) *
                                  bf16_to_f32(gamma[c]) +
                              bf16_to_f32(beta[c]));
  }
  return 0;
}

// Per-channel (mean, biased variance) of an f32 NCHW tensor, two passes over its planes.
void channel_statistics(const float* a, const Shape& s, std::vector<float>& mean,
                        std::vector<float>& var) {
  const std::size_t plane = conv_kit::output_plane(geometry_of(s));
  const auto channels = static_cast<std::size_t>(s.out_channels);
  const std::size_t batch = static_cast<std::size_t>(s.batch);
  const double count = static_cast<double>(plane * batch);
  mean.assign(channels, 0.0f);
  var.assign(channels, 0.0f);
  // Channels are independent (each sum is the same however they are split): over the threads.
#pragma omp parallel for schedule(static)
  for (std::size_t c = 0; c < channels; ++c) {
    double sum = 0;
    for (std::size_t n = 0; n < batch; ++n)
      sum += ops::sum_f32(a + (n * channels + c) * plane, plane);
    mean[c] = static_cast<float>(sum / count);
    double squares = 0;
    for (std::size_t n = 0; n < batch; ++n)
      squares += ops::sum_squared_deviations(a + (n * channels + c) * plane, plane, mean[c]);
    var[c] = static_cast<float>(squares / count);
  }
}

// What a fusing compiler emits: the convolution with its bias and mish fused into the output tiles
// (oneDNN bias + eltwise_mish), stored f32 NCHW; the per-channel batch statistics in two passes;
// one normalize-scale-shift pass storing the output in its dtype.
int baseline(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::size_t plane = conv_kit::output_plane(g);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  const std::size_t planes = static_cast<std::size_t>(s.batch) * channels;
  const auto [conv_bias, gamma, beta] = conv_kit::load_bias_and_affine(in);
  ops::F32Buffer a(planes * plane);
  ops::conv(g, in[0].data, KB_BF16, in[1].data, KB_BF16, a.data(), KB_F32, ops::ConvLayout::kPlain,
            {conv_bias.data(), {{ops::ConvPostOp::Kind::kMish}}});
  std::vector<float> mean, var;
  channel_statistics(a.data(), s, mean, var);
#pragma omp parallel for schedule(static)
  for (std::size_t p = 0; p < planes; ++p) {
    const std::size_t c = p % channels;
    const float scale = gamma.data()[c] / std::sqrt(var[c] + static_cast<float>(kEps));
    const float shift = beta.data()[c] - mean[c] * scale;
    conv_kit::store_scaled(out[0], p * plane, a.data() + p * plane, plane, scale, shift);
  }
  return 0;
}

// The JAX program in bf16: conv result rounded, + bias, softplus (jax.nn.softplus, one op), tanh
// and the product each rounded; batch mean and variance accumulated in f32 and rounded; then a -
// mean, var + eps, sqrt, the division, * weight and + bias each rounded.
int bf16_program(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::size_t plane = conv_kit::output_plane(g);
  const auto channels = static_cast<std::size_t>(s.out_channels);
  ops::F32Buffer a = conv_kit::bf16_conv_bias(g, in[0], in[1], in[2]);
  const std::size_t count = a.size();
  const auto* gamma = static_cast<const bf16_t*>(in[3].data);
  const auto* beta = static_cast<const bf16_t*>(in[4].data);
  for (std::size_t i = 0; i < count; ++i) {
    const float y = a.data()[i];
    const float sp = ops::jnp::softplus(y);
    a.data()[i] = round_to_bf16(round_to_bf16(std::tanh(sp)) * y);
  }
  // mean = jnp.mean(x, (0, 2, 3)) and var = jnp.mean((x - mean) ** 2, (0, 2, 3)): f32 sums of bf16
  // values, each result rounded; the deviations and their squares are bf16 tensors.
  std::vector<float> mean(channels, 0.0f), var(channels, 0.0f);
  for (std::size_t i = 0; i < count; ++i) mean[i / plane % channels] += a.data()[i];
  const auto per_channel = static_cast<float>(count / channels);
  for (float& m : mean) m = round_to_bf16(m / per_channel);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t c = i / plane % channels;
    const float deviation = round_to_bf16(a.data()[i] - mean[c]);
    var[c] += round_to_bf16(deviation * deviation);
  }
  for (float& v : var) v = round_to_bf16(v / per_channel);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t c = i / plane % channels;
    const float denom =
        round_to_bf16(std::sqrt(round_to_bf16(var[c] + round_to_bf16(static_cast<float>(kEps)))));
    const float normalized = round_to_bf16(round_to_bf16(a.data()[i] - mean[c]) / denom);
    o[i] = f32_to_bf16(round_to_bf16(normalized * bf16_to_f32(gamma[c])) + bf16_to_f32(beta[c]));
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kConv2dActivationBatchNorm34k = with_programs<Programs>({
    .name = "34k_Conv2d_Activation_BatchNorm",
    .kernelbench_problem = 52,
    .summary = "BatchNorm2d_train(mish(conv2d_3x3_valid(x, conv_weight) + conv_bias)) on bf16 NCHW",
    .problem = make_problem,
    // The bf16 program rounds the conv output (|y| ~ 20 with unscaled weights) and mish's three
    // ops before the batch norm; channels whose mish output is mostly ~0 have a small sigma, so
    // their tail values normalize to |out| up to ~60, where bf16's own step is 0.25 and the
    // compounded relative error ~1.2%. Measured (20 smoke + 3 cpu seeds): worst 0.8 at |out| ~55,
    // 0.026 at |out| 0.014, rel-L2 up to 0.0071. rtol 0.03 is about twice that. atol 0.25: the
    // normalization magnifies the rounding of a small-sigma channel's conv output, and over 20-40
    // smoke seeds (kbench validate) elements near |out| 1 erred by up to 0.158, beyond atols of
    // 0.05 and 0.1; at 0.25 the worst of 200 smoke and 4 cpu seeds used 0.53 of the rule, of
    // 20,000 smoke seeds 0.96 (0.36 off at |out| ~4); at 0.35 it uses 0.76 (30 cpu seeds: 0.65).
    // 5% RMS noise (rel-L2 0.05) stays 3.3x over the rel-L2 bound, which rejects every degenerate
    // output.
    .tolerance = Tolerance{.atol = 0.35, .rtol = 0.03, .max_rel_l2 = 0.015},
    .scaffold = scaffolds::k34k_Conv2d_Activation_BatchNorm,
});

}  // namespace kbench
