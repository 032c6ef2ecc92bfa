// The convolution building block of the conv-class baselines: oneDNN convolution (2-D and 3-D) and
// transposed convolution (deconvolution) forward on plain NC(D)HW activations and PyTorch-layout
// weights, with the conv bias and an elementwise post-op chain fused into the output tiles. One
// primitive per configuration, created once per process; oneDNN picks its blocked layouts
// (format_tag::any) and the call reorders into and out of them, as a framework's conv call does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kbench/kernel.h"

namespace kbench::ops {

// The geometry of one convolution. Spatial vectors have 2 (H, W) or 3 (D, H, W) entries.
struct ConvGeometry {
  std::int64_t batch = 0, in_channels = 0, out_channels = 0;
  std::vector<std::int64_t> in_spatial;  // input extents
  std::vector<std::int64_t> kernel;      // kernel extents
  std::vector<std::int64_t> stride;      // empty: all 1
  std::vector<std::int64_t> padding;  // per side (left, and right unless padding_right); empty: 0
  // A transposed convolution (PyTorch ConvTranspose, JAX conv_transpose): output extent
  // (in - 1) * stride - 2 * padding + kernel, weights (in_channels, out_channels, k...).
  bool transposed = false;
  std::vector<std::int64_t> padding_right;  // forward only: right padding where it differs

  // Per spatial axis, with the defaults above filled in.
  std::int64_t stride_at(std::size_t axis) const { return axis < stride.size() ? stride[axis] : 1; }
  std::int64_t padding_at(std::size_t axis) const {
    return axis < padding.size() ? padding[axis] : 0;
  }
  std::int64_t padding_right_at(std::size_t axis) const {
    return axis < padding_right.size() ? padding_right[axis] : padding_at(axis);
  }
};

// Output spatial extents: (in + 2p - k) / s + 1, or (in - 1) s - 2p + k when transposed.
std::vector<std::int64_t> conv_output_spatial(const ConvGeometry& g);
// 2 N Cin Cout prod_i(out_i k_i): the spec's analytic conv FLOPs (every tap of every output
// counted, padding taps included; for a transposed conv, those of its zero-dilated form).
double conv_direct_flops(const ConvGeometry& g);
// 2 N Cin Cout prod_i(live taps on axis i): only the products of a weight with an input element,
// not with padding or the zeros a transposed conv's dilated form inserts, which a kernel never
// needs to compute. Equal to conv_direct_flops for an unpadded forward conv; about 1/8 of it for a
// stride-2 3-D transposed conv. The roofline's floor (Problem::essential_flops).
double conv_live_flops(const ConvGeometry& g);

// One elementwise step applied to each output element after the bias, in order.
struct ConvPostOp {
  enum class Kind {
    kRelu,
    kGeluTanh,
    kGeluErf,
    kTanh,
    kMish,           // x * tanh(softplus(x))
    kHardSwish,      // x * relu6(x + 3) / 6
    kAddPerChannel,  // y += values[channel]
    kMulPerChannel,  // y *= values[channel]
    kLinear,         // y = alpha * y + beta
  };
  Kind kind = Kind::kRelu;
  const float* values = nullptr;  // kAddPerChannel / kMulPerChannel: out_channels f32 values
  float alpha = 1.0f, beta = 0.0f;
};

struct ConvEpilogue {
  const float* bias = nullptr;  // f32, one per output channel; null for none
  std::vector<ConvPostOp> post_ops;
};

// Where the output lands: plain NC(D)HW, or channels-last N(D)HWC (for consumers that reduce over
// channels or per channel; oneDNN writes it directly, without the reorder plain costs).
enum class ConvLayout { kPlain, kChannelsLast };

// The arithmetic oneDNN runs: bf16 operands, or both operands widened to f32. Either way products
// are exact and sums f32. conv() takes the library plan's path for the call (planned_conv_path,
// ops/library_calls.h), else the default: bf16 where the CPU has native bf16 (avx512_core_bf16 or
// AMX; elsewhere oneDNN emulates bf16 and measured 3-4x slower than f32 on an Ice Lake core, see
// conv_onednn.cc), otherwise f32. Native is not always the faster: on the Emerald Rapids VM
// (avx512_core_bf16, no AMX) f32 was 1.5-2.3x faster for every conv of the suite.
enum class ConvPath { kOnednnBf16, kOnednnF32 };
ConvPath conv_default_path();
const char* conv_path_name(ConvPath path);  // "onednn_bf16" | "onednn_f32"

// dst = epilogue(conv(src, weights)). src: plain NC(D)HW, bf16 or f32; weights: O I k... (forward)
// or I O k... (transposed), bf16 or f32; dst: f32 or bf16 (rounded once, at the store) in
// `dst_layout`. Reorders into oneDNN's chosen layouts and back are inside the call.
void conv(const ConvGeometry& g, const void* src, kb_dtype src_dtype, const void* weights,
          kb_dtype weights_dtype, void* dst, kb_dtype dst_dtype, ConvLayout dst_layout,
          const ConvEpilogue& epilogue = {});

// How a strided transposed convolution runs. kDeconvolution is oneDNN's deconvolution primitive.
// kStridePhases splits it by output phase: the outputs o with (o + p) mod s = r, per axis, are a
// forward convolution of x with the k/s taps of phase r (kernel entries r + s t, reversed) and
// padding (k/s - 1 - m0, ...), so s^dims forward convolutions compute exactly the live products;
// each phase's channels-last result is scattered into its interleaved output positions. Measured
// in thread CPU time on an Ice Lake core (oneDNN 2.6, 28k's cpu shape, k=4 s=2 p=1, 32 -> 64
// channels, 3 rounds): deconvolution 28-30 ms into NCDHW (26-29 channels-last), the phases 39-43
// ms into NCDHW (24-29 channels-last, the scatter into channel planes being the difference).
// kAuto takes the deconvolution primitive; the phases stay as a tested alternative.
enum class TransposedMethod { kAuto, kStridePhases, kDeconvolution };

// The same on an explicit path; false when oneDNN cannot run it on this CPU (or `method` does not
// apply to this geometry).
bool conv_on_path(ConvPath path, const ConvGeometry& g, const void* src, kb_dtype src_dtype,
                  const void* weights, kb_dtype weights_dtype, void* dst, kb_dtype dst_dtype,
                  ConvLayout dst_layout, const ConvEpilogue& epilogue = {},
                  TransposedMethod method = TransposedMethod::kAuto);

// ---- Inputs ----

// An InitRule::structured fill for an (N, C, ...) activation: uniform[0,1) (the originals' init)
// plus one offset per (sample, channel) drawn normal(0, 1) from a second Philox stream of the same
// seed. Where the output averages over every position of a sample (a global pool, a mean), iid
// inputs make every sample's result the same to ~1e-3, so a kernel that computed one sample and
// copied it would pass; the offsets give each sample its own channel means.
void fill_uniform_with_channel_offsets(std::uint64_t seed, std::uint32_t stream, kb_tensor& t);

// ---- Passes the conv baselines run over a conv's f32 output ----

// Sum of x[0..n) in sixteen f32 lanes (vectorized; lanes summed pairwise at the end).
float sum_f32(const float* x, std::size_t n);
// Sum of (x[i] - shift)^2 in sixteen f32 lanes: the second pass of a two-pass variance.
float sum_squared_deviations(const float* x, std::size_t n, float shift);
// Sum of x[i] over `count` rows of `width` values `stride` apart, into sums[0..width): per-channel
// sums of a channels-last tensor (rows = pixels, width = channels).
void add_rows(const float* x, std::size_t count, std::size_t width, std::size_t stride,
              float* sums);
// Sum of (x[r, c] - shift[c])^2 over the same rows, into sums[0..width): per-channel squared
// deviations from a per-channel (e.g. per-group) mean.
void add_squared_deviation_rows(const float* x, std::size_t count, std::size_t width,
                                std::size_t stride, const float* shift, float* sums);
// sums[c] += gelu_tanh(y[p, c]) over the `pixels` rows of a channels-last block of `channels`
// values per row, the rows split over the thread budget as channel_group_stats splits them: a
// GELU fused into the global pool that follows it, with XLA's tanh (ops/xla_tanh-inl.h).
void add_gelu_rows(const float* y, std::size_t pixels, std::size_t channels, float* sums);

// GroupNorm's statistics of one sample's channels-last conv output (`pixels` rows of `channels`
// values; `groups` groups of consecutive channels, dividing `channels`): sums[c] channel c's sum,
// mean[c] its group's mean, inv_std[g] = 1 / sqrt(biased variance + eps) of group g. The channel
// sums and squared deviations are vectorized across each row, the rows split over the thread
// budget in contiguous ranges (partial sums added in thread order); group totals are summed in
// double. `stats` is reused across samples so its vectors are allocated once.
struct ChannelGroupStats {
  std::vector<float> sums, mean, squares;
  std::vector<double> inv_std;
};
void channel_group_stats(const float* y, std::size_t pixels, std::size_t channels,
                         std::size_t groups, double eps, ChannelGroupStats& stats);

// The textbook sums in double, for references: out (N, Cout, spatial...) plain, no bias, from bf16
// src (N, Cin, spatial...) and bf16 weights in the layouts above. out[o] += x[i] w[k] with
// i = o * s - p + k (forward) or o = i * s - p + k (transposed).
std::vector<double> conv_reference(const ConvGeometry& g, const std::uint16_t* src,
                                   const std::uint16_t* weights);

}  // namespace kbench::ops
