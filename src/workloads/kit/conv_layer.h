// The convolution layer y = conv(x, weight) + bias that the KernelBench level-2 conv workloads
// start with (18k, 22k, 25k, 28k, 33k, 34k, 39k, 46k): their shapes, the common part of their
// Problem, their tensor checks, the double reference and bf16 emulation of the biased conv, the
// per-sample conv of the baselines that keep one sample's output in cache, the normalization
// statistics the norm workloads share, and the output stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "kbench/kernel.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"

namespace kbench::conv_kit {

// The presets' shapes of the 2-D and 3-D workloads, in the order their configs list the extents.
struct Shape2d {
  std::int64_t batch, in_channels, out_channels, height, width;
};
struct Shape3d {
  std::int64_t batch, in_channels, out_channels, depth, height, width;
};

// The sizes of the 2-D workloads whose original convolves a (128, 64, 128, 128) input into 128
// channels (18k, 22k): cpu keeps the channels and shrinks N, H and W; smoke's odd channel counts
// and extents meet every block edge.
inline constexpr Presets<Shape2d> kPresets2d = {
    .smoke = {2, 13, 19, 11, 13},
    .cpu = {4, 64, 128, 82, 82},
    .full = {128, 64, 128, 128, 128},
};

// A VALID, stride-1 forward conv of `s` with a kernel of extent `kernel` along every axis.
ops::ConvGeometry geometry(const Shape2d& s, std::int64_t kernel);
ops::ConvGeometry geometry(const Shape3d& s, std::int64_t kernel);
// geometry(s, kKernel) as a function of the shape alone: the geometry_of that shape_of_call and a
// workload's programs take, for a layer whose kernel is its only constant.
template <std::int64_t kKernel, class Shape>
ops::ConvGeometry valid_geometry(const Shape& s) {
  return geometry(s, kKernel);
}

// The Problem's entries every conv workload begins with: config batch_size, in_channels,
// out_channels and kernel_size (the first kernel extent); inputs x (N, Cin, spatial...) and the
// weight in `g`'s layout; flops the direct count (the spec's) and essential_flops the live taps
// (less where `g` pads or is transposed). The caller appends its own config and inputs,
// sets the outputs, then min_bytes.
Problem problem(const ops::ConvGeometry& g, InitRule x_init, const char* weight_name,
                InitRule weight_init);

// One bf16 vector input of a Problem: a bias or a norm's scale or shift.
struct VectorInput {
  const char* name;
  InitRule init;
};
// Appends each of `vectors` as a bf16 (extent) input, in order.
void add_vectors(Problem& problem, std::int64_t extent, std::initializer_list<VectorInput> vectors);
// `problem` with its one output, bf16 "out" of `extents`, and min_bytes over all its tensors: a
// make_problem's last step, once every input is in.
Problem with_output(Problem problem, std::vector<std::int64_t> extents);

// (N, Cout, output spatial...): the conv output's extents.
std::vector<std::int64_t> output_extents(const ops::ConvGeometry& g);
// Product of the output's spatial extents: one (sample, channel) plane or volume.
std::size_t output_plane(const ops::ConvGeometry& g);

// The geometry of a call with `inputs` inputs and one output whose x (in[0]) is bf16
// (N, Cin, spatial...) and weight (in[1]) bf16 (Cout, Cin, kernel...), or (Cin, Cout, kernel...)
// when transposed, with every spatial extent of a forward conv at least the kernel's. `layer`
// carries the workload's kernel, stride, padding and direction; its extents are replaced by the
// call's. The output itself is left to the caller, which knows what follows the conv.
std::optional<ops::ConvGeometry> geometry_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                                  std::int32_t num_outputs, std::int32_t inputs,
                                                  ops::ConvGeometry layer);
// The workload's Shape {batch, in_channels, out_channels, spatial...} of a checked call's geometry.
template <class Shape>
Shape shape_of(const ops::ConvGeometry& g) {
  const std::vector<std::int64_t>& e = g.in_spatial;
  // An aggregate takes fewer initializers than it has fields, so the 3-D test must come first.
  if constexpr (requires { Shape{g.batch, g.in_channels, g.out_channels, e[0], e[1], e[2]}; })
    return Shape{g.batch, g.in_channels, g.out_channels, e[0], e[1], e[2]};
  else
    return Shape{g.batch, g.in_channels, g.out_channels, e[0], e[1]};
}

// True when each of the `count` tensors from `first` on is a bf16 vector of `extent` values.
bool vectors_match(const kb_tensor* first, std::int32_t count, std::int64_t extent);
// ops::is_float_output for extents known only at run time.
bool is_float_output(const kb_tensor& t, const std::vector<std::int64_t>& extents);

// checked_entry's kShapeOf for the common signature: inputs x, weight and kVectors bf16 (Cout)
// vectors, out_channels a multiple of kGroups, and one bf16 or f32 output of kExtents(geometry).
// kGeometry is the workload's geometry_of, which gives the layer's kernel, stride and direction.
template <class Shape, auto kGeometry, std::int32_t kVectors, auto kExtents = output_extents,
          std::int64_t kGroups = 1>
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<ops::ConvGeometry> g =
      geometry_of_call(in, num_inputs, num_outputs, 2 + kVectors, kGeometry(Shape{}));
  if (!g || g->out_channels % kGroups != 0 || !vectors_match(in + 2, kVectors, g->out_channels) ||
      !is_float_output(out[0], kExtents(*g)))
    return std::nullopt;
  return shape_of<Shape>(*g);
}

// in[2], in[3], in[4] as f32: the conv bias and the norm's scale and shift, as the baselines of
// the norm workloads pass them to their f32 passes.
struct BiasAndAffine {
  ops::F32Buffer bias, gamma, beta;
};
BiasAndAffine load_bias_and_affine(const kb_tensor* in);

// conv(x, weight) + bias[c], every product and sum in double, plain NC(D)HW: the references' first
// step.
std::vector<double> reference(const ops::ConvGeometry& g, const kb_tensor& x,
                              const kb_tensor& weight, const kb_tensor& bias);

// The JAX program's conv + bias on bf16 tensors: the conv's f32 sums rounded to bf16 once (its
// bf16 result), then the bias added and rounded again (a separate bf16 op). Plain NC(D)HW f32
// values holding bf16 numbers.
ops::F32Buffer bf16_conv_bias(const ops::ConvGeometry& g, const kb_tensor& x,
                              const kb_tensor& weight, const kb_tensor& bias);

// Sample n's conv (batch 1 of `g`) into `y`: the baselines that run their passes over one
// sample's output while it is still in cache.
void conv_sample(const ops::ConvGeometry& g, const kb_tensor& x, const kb_tensor& weight,
                 std::size_t n, float* y, ops::ConvLayout layout,
                 const ops::ConvEpilogue& epilogue);

// Mean and 1 / sqrt(biased variance + eps) of n values, two passes in double.
struct NormStats {
  double mean, inv_std;
};
NormStats reference_norm_stats(const double* v, std::size_t n, double eps);

// The walk of a group norm over a conv output y (NC(D)HW) in `groups` groups of consecutive
// channels per sample: group(n, first, v, size, channel) for each group of sample n in order,
// with v the group's `size` values starting at element `first` of the sample and channel(i) the
// channel of v[i]; then done(n) once the sample's groups are through.
template <class T, class Group, class SampleDone>
void for_each_group(const ops::ConvGeometry& g, T* y, std::size_t groups, Group group,
                    SampleDone done) {
  const std::size_t plane = output_plane(g), channels = static_cast<std::size_t>(g.out_channels);
  const std::size_t per_group = channels / groups, group_size = per_group * plane;
  for (std::size_t n = 0; n < static_cast<std::size_t>(g.batch); ++n) {
    for (std::size_t k = 0; k < groups; ++k) {
      group(n, k * group_size, y + (n * channels + k * per_group) * plane, group_size,
            [&](std::size_t i) { return k * per_group + i / plane; });
    }
    done(n);
  }
}

// The group norm of a conv output y (NC(D)HW, as conv_kit::reference returns it) in `groups`
// groups of consecutive channels per sample (groups = channels is the instance norm), in double:
// each(n, j, y, (y - mean) * inv_std * gamma[c] + beta[c]) for every element j of sample n in
// order, then done(n) once the sample's groups are through.
template <class Each, class SampleDone>
void reference_group_norm(const ops::ConvGeometry& g, const std::vector<double>& y,
                          std::size_t groups, double eps, const kb_tensor& gamma,
                          const kb_tensor& beta, Each each, SampleDone done) {
  const auto* gammas = static_cast<const bf16_t*>(gamma.data);
  const auto* betas = static_cast<const bf16_t*>(beta.data);
  for_each_group(
      g, y.data(), groups,
      [&](std::size_t n, std::size_t first, const double* v, std::size_t size, auto channel) {
        const auto [mean, inv_std] = reference_norm_stats(v, size, eps);
        for (std::size_t i = 0; i < size; ++i) {
          const std::size_t c = channel(i);
          each(n, first + i, v[i],
               (v[i] - mean) * inv_std * bf16_to_f32(gammas[c]) + bf16_to_f32(betas[c]));
        }
      },
      done);
}

// jnp.mean and jnp.var of n bf16 values as the JAX program computes them (f32 sums, results
// rounded), as the rounded mean and the rounded sqrt(var + eps) the program divides by.
struct Bf16NormStats {
  float mean, denom;
};
Bf16NormStats bf16_norm_stats(const float* v, std::size_t n, double eps);

// (v - mean) / denom * gamma + beta on bf16 tensors, each op rounded.
inline float bf16_normalize(float v, float mean, float denom, float gamma, float beta) {
  const float normalized = round_to_bf16(round_to_bf16(v - mean) / denom);
  return round_to_bf16(round_to_bf16(normalized * gamma) + beta);
}

// The JAX program's group norm (see reference_group_norm) of the bf16 conv output y:
// each(n, j, y, bf16_normalize(y, ...)) for every element j of sample n in order, group_done(v)
// after each group's values v (writable, so a program may keep its results in y), then done(n).
template <class Each, class GroupDone, class SampleDone>
void bf16_group_norm(const ops::ConvGeometry& g, ops::F32Buffer& y, std::size_t groups, double eps,
                     const kb_tensor& gamma, const kb_tensor& beta, Each each, GroupDone group_done,
                     SampleDone done) {
  const auto* gammas = static_cast<const bf16_t*>(gamma.data);
  const auto* betas = static_cast<const bf16_t*>(beta.data);
  for_each_group(
      g, y.data(), groups,
      [&](std::size_t n, std::size_t first, float* v, std::size_t size, auto channel) {
        const auto [mean, denom] = bf16_norm_stats(v, size, eps);
        for (std::size_t i = 0; i < size; ++i) {
          const std::size_t c = channel(i);
          each(n, first + i, v[i],
               bf16_normalize(v[i], mean, denom, bf16_to_f32(gammas[c]), bf16_to_f32(betas[c])));
        }
        group_done(v, size);
      },
      done);
}

// Element i of a bf16 or f32 output := value (rounded to nearest even for bf16).
void store(kb_tensor& out, std::size_t i, float value);
// out[offset + i] := v[i] * scale + shift for i < n, in out's dtype (bf16 or f32).
void store_scaled(kb_tensor& out, std::size_t offset, const float* v, std::size_t n, float scale,
                  float shift);

}  // namespace kbench::conv_kit
