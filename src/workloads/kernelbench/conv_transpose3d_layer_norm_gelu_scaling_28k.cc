// 28k_ConvTranspose3d_LayerNorm_GELU_Scaling: KernelBench level 2 problem 34 (PyTorch, translated
// to JAX): a strided 3-D transposed convolution with bias, LayerNorm over the last axis, GELU, and
// a scaling.
//
// Operator  y = conv_transpose3d(x, conv_weight, stride 2, padding 1) + conv_bias[c]: PyTorch's
//           ConvTranspose3d, y[o] += x[i] w[ci, co, k] at o = 2 i - 1 + k per axis, output extents
//           2 D, 2 H, 2 W (the translation zero-dilates x and runs a VALID-style conv with padding
//           k-1-p = 2 and the flipped kernel, which is the same sum);
//           l = (y - mean_w(y)) / sqrt(var_w(y) + 1e-5) * ln_weight[w] + ln_bias[w], LayerNorm
//           over the LAST axis of NCDHW (W_out = 64, which coincides with out_channels);
//           out = gelu(l) * 1.0, gelu the tanh approximation (jax.nn.gelu's default).
// Inputs    x            bf16 (N, Cin, D, H, W)       uniform[0,1)
//           conv_weight  bf16 (Cin, Cout, 4, 4, 4)    normal (unscaled)
//           conv_bias    bf16 (Cout)                  zeros
//           ln_weight    bf16 (2W)                    uniform[0.5,1.5)  (original: ones)
//           ln_bias      bf16 (2W)                    normal*0.1        (original: zeros)
// Output    out          bf16 (N, Cout, 2D, 2H, 2W)
// FLOPs     2*N*Cout*Do*Ho*Wo*Cin*4^3, the conv on the zero-dilated input with its zero taps
//           counted (the spec's formula); 1,099,511,627,776 at full size (N=32, Cin=32, Cout=64,
//           D=16, H=W=32). A direct transposed convolution needs about 1/8 of these.
// Essential 2*N*Cin*Cout*(4D-2)(4H-2)(4W-2), the live taps only (each input element meets 4 taps
//           per axis, 3 at either end): the roofline's floor.
// Character a transposed convolution (K = Cin*8 = 256 live taps per output) whose output rows
//           are normalized along W and passed through a tanh: one row pass after the conv.
// Deviations
//   - ln_weight and ln_bias are non-trivial (the original's ones and zeros make the affine step an
//     identity that a kernel could skip unnoticed). conv_bias stays zeros: LayerNorm over W
//     removes any per-channel constant exactly, so no value of it changes the output.
//   - The cpu preset is (N, D, H, W) = (2, 8, 16, 32): W_out = 64 keeps the LayerNorm width and
//     the channels and kernel are the original's (17.2 GFLOP by the spec's count, 1.92 live).
//     Smoke uses W = 7 (W_out = 14), Cin = 5, Cout = 6.
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "ops/jnp_bf16.h"
#include "ops/rows.h"
#include "ops/xla_tanh-inl.h"
#include "scaffolds.h"
#include "workloads/kit/conv_layer.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

using Shape = conv_kit::Shape3d;
constexpr std::int64_t kKernel = 4;
constexpr std::int64_t kStride = 2;
constexpr std::int64_t kPadding = 1;
constexpr double kEps = 1e-5;
constexpr double kScaling = 1.0;

constexpr Presets<Shape> kPresets = {
    .smoke = {2, 5, 6, 3, 5, 7},
    .cpu = {2, 32, 64, 8, 16, 32},
    .full = {32, 32, 64, 16, 32, 32},
};

ops::ConvGeometry geometry_of(const Shape& s) {
  return {s.batch,
          s.in_channels,
          s.out_channels,
          {s.depth, s.height, s.width},
          {kKernel, kKernel, kKernel},
          {kStride, kStride, kStride},
          {kPadding, kPadding, kPadding},
          /*transposed=*/true};
}

// Output extents: (in - 1) * 2 - 2 + 4 = 2 in.
std::int64_t out_extent(std::int64_t in) {
  return (in - 1) * kStride - 2 * kPadding + kKernel;
}

Problem make_problem(Size size) {
  const ops::ConvGeometry g = geometry_of(kPresets.at(size));
  const std::int64_t ow = out_extent(g.in_spatial[2]);
  // The direct count of the zero-dilated conv is the spec's formula.
  Problem problem =
      conv_kit::problem(g, InitRule::uniform(0.0, 1.0), "conv_weight", InitRule::normal(1.0));
  problem.config.insert(problem.config.end(), {{"stride", kStride},
                                               {"padding", kPadding},
                                               {"bias", true},
                                               {"eps", kEps},
                                               {"scaling_factor", kScaling}});
  conv_kit::add_vectors(problem, g.out_channels, {{"conv_bias", InitRule::constant(0.0)}});
  conv_kit::add_vectors(
      problem, ow,
      {{"ln_weight", InitRule::uniform(0.5, 1.5)}, {"ln_bias", InitRule::normal(0.1)}});
  return conv_kit::with_output(std::move(problem), conv_kit::output_extents(g));
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<ops::ConvGeometry> g =
      conv_kit::geometry_of_call(in, num_inputs, num_outputs, 5, geometry_of({}));
  if (!g) return std::nullopt;
  const std::vector<std::int64_t>& e = g->in_spatial;
  if (!conv_kit::vectors_match(in + 2, 1, g->out_channels) ||
      !conv_kit::vectors_match(in + 3, 2, out_extent(e[2])) ||
      !conv_kit::is_float_output(out[0], conv_kit::output_extents(*g)))
    return std::nullopt;
  return conv_kit::shape_of<Shape>(*g);
}

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

int reference(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const std::vector<double> y = conv_kit::reference(geometry_of(s), in[0], in[1], in[2]);
  const auto* gamma = static_cast<const bf16_t*>(in[3].data);
  const auto* beta = static_cast<const bf16_t*>(in[4].data);
  const std::size_t width = static_cast<std::size_t>(out_extent(s.width));
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t r = 0; r * width < y.size(); ++r) {
    const double* row = y.data() + r * width;
    const auto [mean, inv_std] = conv_kit::reference_norm_stats(row, width, kEps);
    for (std::size_t i = 0; i < width; ++i)
      o[r * width + i] = static_cast<float>(
          gelu_tanh((row[i] - mean) * inv_std * bf16_to_f32(gamma[i]) + bf16_to_f32(beta[i])) *
          kScaling);
  }
  return 0;
}

// gelu_tanh(x) * scaling over lanes.
template <class D, class V>
V gelu_scaled(D d, V x) {
  return hn::Mul(ops::gelu_tanh_lanes(d, x), hn::Set(d, static_cast<float>(kScaling)));
}

// One LayerNorm + GELU row in f32: two reductions, then the normalized, scaled, activated values
// (full vectors through Highway, the tail through the same formula in a padded temporary).
void layer_norm_gelu_row(const float* y, const float* gamma, const float* beta, std::size_t width,
                         float* out) {
  const float mean = ops::sum(y, width) / static_cast<float>(width);
  const float var = ops::centered_sum_of_squares(y, width, mean) / static_cast<float>(width);
  const float inv_std = 1.0f / std::sqrt(var + static_cast<float>(kEps));
  const hn::ScalableTag<float> df;
  const std::size_t lanes = hn::Lanes(df);
  const auto m = hn::Set(df, mean), is = hn::Set(df, inv_std);
  auto row = [&](const float* src, const float* g, const float* b, float* dst) {
    const auto normalized = hn::Mul(hn::Sub(hn::LoadU(df, src), m), is);
    hn::StoreU(gelu_scaled(df, hn::MulAdd(normalized, hn::LoadU(df, g), hn::LoadU(df, b))), df,
               dst);
  };
  std::size_t i = 0;
  for (; i + lanes <= width; i += lanes) row(y + i, gamma + i, beta + i, out + i);
  if (i < width) {
    HWY_ALIGN float src[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float g[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float b[HWY_MAX_BYTES / sizeof(float)] = {};
    HWY_ALIGN float dst[HWY_MAX_BYTES / sizeof(float)];
    for (std::size_t j = i; j < width; ++j)
      src[j - i] = y[j], g[j - i] = gamma[j], b[j - i] = beta[j];
    row(src, g, b, dst);
    for (std::size_t j = i; j < width; ++j) out[j] = dst[j - i];
  }
}

// What a fusing compiler emits: per sample, the oneDNN deconvolution (a direct transposed
// convolution, no zero-dilated copy) written f32 NCDHW; one pass over its W rows adding the conv
// bias, computing each row's statistics and storing the normalized, activated values once in the
// output dtype. The bias joins in the row pass, not as the deconvolution's own: oneDNN's
// deconvolution adds a bias in a pass of its own, which on the Emerald Rapids VM took 13.1-13.4
// ms a call against 5.9 without (f32 path, 28k's cpu shape, ONEDNN_VERBOSE). The row pass adds
// it as the program does, though the LayerNorm over W removes it (see Deviations).
int baseline(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const std::size_t width = static_cast<std::size_t>(out_extent(s.width));
  const std::size_t rows = static_cast<std::size_t>(s.batch * s.out_channels * out_extent(s.depth) *
                                                    out_extent(s.height));
  const auto [conv_bias, gamma, beta] = conv_kit::load_bias_and_affine(in);
  // One sample at a time, so the row pass reads the conv output while it is still in cache.
  const ops::ConvGeometry geometry = geometry_of(s);
  const std::size_t sample_rows = rows / static_cast<std::size_t>(s.batch);
  const std::size_t channel_rows = sample_rows / static_cast<std::size_t>(s.out_channels);
  ops::F32Buffer y(sample_rows * width);
  const bool bf16_out = out[0].dtype == KB_BF16;
  for (std::size_t n = 0; n < static_cast<std::size_t>(s.batch); ++n) {
    conv_kit::conv_sample(geometry, in[0], in[1], n, y.data(), ops::ConvLayout::kPlain, {});
    // The rows are independent: split over the threads, each with its own staging row.
#pragma omp parallel
    {
      std::vector<float> row(width);
#pragma omp for schedule(static)
      for (std::size_t i = 0; i < sample_rows; ++i) {
        const std::size_t r = n * sample_rows + i;
        float* conv_row = y.data() + i * width;
        const float bias = conv_bias.data()[i / channel_rows];
        for (std::size_t j = 0; j < width; ++j) conv_row[j] += bias;
        float* dst = bf16_out ? row.data() : static_cast<float*>(out[0].data) + r * width;
        layer_norm_gelu_row(conv_row, gamma.data(), beta.data(), width, dst);
        if (bf16_out)
          convert_f32_to_bf16(dst, static_cast<bf16_t*>(out[0].data) + r * width, width);
      }
    }
  }
  return 0;
}

// The JAX program in bf16: the transposed conv's bf16 result, + bias; the row mean and variance
// accumulated in f32 and rounded; y - mean, var + eps, sqrt, the division, * weight, + bias,
// jax.nn.gelu's ops (cube, scale, add, scale, tanh, 1 + ., product) and * 1.0 each rounded.
int bf16_program(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const std::size_t width = static_cast<std::size_t>(out_extent(s.width));
  const ops::F32Buffer y = conv_kit::bf16_conv_bias(geometry_of(s), in[0], in[1], in[2]);
  const auto* gamma = static_cast<const bf16_t*>(in[3].data);
  const auto* beta = static_cast<const bf16_t*>(in[4].data);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t r = 0; r * width < y.size(); ++r) {
    const float* v = y.data() + r * width;
    // mean = jnp.mean(x) and var = jnp.mean((x - mean) ** 2): f32 sums of bf16 values, each
    // result rounded; the deviations and their squares are bf16 tensors.
    const float mean = ops::jnp::mean(v, width);
    float squares = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const float deviation = round_to_bf16(v[i] - mean);
      squares += round_to_bf16(deviation * deviation);
    }
    const float var = round_to_bf16(squares / static_cast<float>(width));
    const float denom =
        round_to_bf16(std::sqrt(round_to_bf16(var + round_to_bf16(static_cast<float>(kEps)))));
    for (std::size_t i = 0; i < width; ++i) {
      const float x =
          conv_kit::bf16_normalize(v[i], mean, denom, bf16_to_f32(gamma[i]), bf16_to_f32(beta[i]));
      o[r * width + i] = f32_to_bf16(ops::jnp::gelu_tanh(x) * static_cast<float>(kScaling));
    }
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kConvTranspose3dLayerNormGeluScaling28k = with_programs<Programs>({
    .name = "28k_ConvTranspose3d_LayerNorm_GELU_Scaling",
    .kernelbench_problem = 34,
    .summary = "gelu_tanh(LayerNorm_W(conv_transpose3d_k4s2p1(x) + bias)) * 1.0 on bf16 NCDHW",
    .problem = make_problem,
    // The bf16 program rounds the transposed conv's output before the LayerNorm: its error 2^-9 |y|
    // becomes 2^-9 |y| / sigma in normalized units (the uniform[0,1) input gives each W row a mean
    // comparable to its spread, |y| / sigma up to ~3-5), and ~9 further bf16 ops (the norm's and
    // GELU's) add up to 2^-9 |out| each: |err| <~ 2^-9 (5 + 9 |out|) ~ 0.01 + 0.018 |out|. Measured
    // (20 smoke + 3 cpu seeds): worst element error 0.061, rel-L2 up to 0.0061, which the default
    // fails. Over 20,000 smoke seeds atol 0.05 left the worst at 0.9996 of the bound; at 0.075 it
    // uses 0.71 (30 cpu seeds: 0.51). 5% RMS noise (rel-L2 0.05) stays 3.3x over rel-L2's bound.
    .tolerance = Tolerance{.atol = 0.075, .rtol = 0.02, .max_rel_l2 = 0.015},
    .scaffold = scaffolds::k28k_ConvTranspose3d_LayerNorm_GELU_Scaling,
});

}  // namespace kbench
