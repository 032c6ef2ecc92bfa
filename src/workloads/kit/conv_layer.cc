// The conv layer of the KernelBench level-2 conv workloads: Problem entries, tensor checks, the
// double reference and the bf16 emulation (through ops::conv with an f32 result, so it runs fast
// at cpu size).
#include "workloads/kit/conv_layer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "ops/conv.h"

namespace kbench::conv_kit {
namespace {

// The weight's extents: (Cout, Cin, kernel...), or (Cin, Cout, kernel...) when transposed.
std::vector<std::int64_t> weight_extents(const ops::ConvGeometry& g) {
  std::vector<std::int64_t> extents =
      g.transposed ? std::vector<std::int64_t>{g.in_channels, g.out_channels}
                   : std::vector<std::int64_t>{g.out_channels, g.in_channels};
  extents.insert(extents.end(), g.kernel.begin(), g.kernel.end());
  return extents;
}

std::vector<std::int64_t> input_extents(const ops::ConvGeometry& g) {
  std::vector<std::int64_t> extents{g.batch, g.in_channels};
  extents.insert(extents.end(), g.in_spatial.begin(), g.in_spatial.end());
  return extents;
}

// ops::matches with the extents in a vector.
bool matches(const kb_tensor& t, kb_dtype dtype, const std::vector<std::int64_t>& extents) {
  if (extents.size() > std::size(t.shape)) return false;  // beyond the ABI's rank limit of 8
  if (t.dtype != dtype || t.rank != static_cast<std::int32_t>(extents.size())) return false;
  return std::equal(extents.begin(), extents.end(), t.shape);
}

}  // namespace

ops::ConvGeometry geometry(const Shape2d& s, std::int64_t kernel) {
  return {s.batch, s.in_channels, s.out_channels, {s.height, s.width}, {kernel, kernel}};
}

ops::ConvGeometry geometry(const Shape3d& s, std::int64_t kernel) {
  return {s.batch,
          s.in_channels,
          s.out_channels,
          {s.depth, s.height, s.width},
          {kernel, kernel, kernel}};
}

Problem problem(const ops::ConvGeometry& g, InitRule x_init, const char* weight_name,
                InitRule weight_init) {
  Problem problem;
  problem.config = {{"batch_size", g.batch},
                    {"in_channels", g.in_channels},
                    {"out_channels", g.out_channels},
                    {"kernel_size", g.kernel[0]}};
  problem.inputs = {
      {{"x", KB_BF16, input_extents(g)}, x_init},
      {{weight_name, KB_BF16, weight_extents(g)}, weight_init},
  };
  problem.flops = ops::conv_direct_flops(g);
  problem.essential_flops = ops::conv_live_flops(g);
  return problem;
}

void add_vectors(Problem& problem, std::int64_t extent,
                 std::initializer_list<VectorInput> vectors) {
  for (const VectorInput& v : vectors)
    problem.inputs.push_back({{v.name, KB_BF16, {extent}}, v.init});
}

Problem with_output(Problem problem, std::vector<std::int64_t> extents) {
  problem.outputs = {{"out", KB_BF16, std::move(extents)}};
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

std::vector<std::int64_t> output_extents(const ops::ConvGeometry& g) {
  std::vector<std::int64_t> extents{g.batch, g.out_channels};
  const std::vector<std::int64_t> spatial = ops::conv_output_spatial(g);
  extents.insert(extents.end(), spatial.begin(), spatial.end());
  return extents;
}

std::size_t output_plane(const ops::ConvGeometry& g) {
  std::int64_t plane = 1;
  for (const std::int64_t extent : ops::conv_output_spatial(g)) plane *= extent;
  return static_cast<std::size_t>(plane);
}

std::optional<ops::ConvGeometry> geometry_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                                  std::int32_t num_outputs, std::int32_t inputs,
                                                  ops::ConvGeometry layer) {
  const auto rank = static_cast<std::int32_t>(layer.kernel.size() + 2);
  if (num_inputs != inputs || num_outputs != 1 || in[0].rank != rank || in[1].rank != rank)
    return std::nullopt;
  layer.batch = in[0].shape[0];
  layer.in_channels = in[0].shape[1];
  layer.out_channels = in[1].shape[layer.transposed ? 1 : 0];
  layer.in_spatial.assign(in[0].shape + 2, in[0].shape + rank);
  // A transposed conv has an output at every input extent; a forward VALID one needs the kernel.
  for (std::size_t i = 0; i < layer.kernel.size(); ++i)
    if (!layer.transposed && layer.in_spatial[i] < layer.kernel[i]) return std::nullopt;
  if (!matches(in[0], KB_BF16, input_extents(layer)) ||
      !matches(in[1], KB_BF16, weight_extents(layer)))
    return std::nullopt;
  return layer;
}

bool vectors_match(const kb_tensor* first, std::int32_t count, std::int64_t extent) {
  return std::all_of(first, first + count,
                     [&](const kb_tensor& t) { return matches(t, KB_BF16, {extent}); });
}

bool is_float_output(const kb_tensor& t, const std::vector<std::int64_t>& extents) {
  return matches(t, KB_BF16, extents) || matches(t, KB_F32, extents);
}

BiasAndAffine load_bias_and_affine(const kb_tensor* in) {
  return {ops::load_f32(in[2]), ops::load_f32(in[3]), ops::load_f32(in[4])};
}

std::vector<double> reference(const ops::ConvGeometry& g, const kb_tensor& x,
                              const kb_tensor& weight, const kb_tensor& bias) {
  std::vector<double> y = ops::conv_reference(g, static_cast<const bf16_t*>(x.data),
                                              static_cast<const bf16_t*>(weight.data));
  const auto* b = static_cast<const bf16_t*>(bias.data);
  const std::size_t plane = output_plane(g), channels = static_cast<std::size_t>(g.out_channels);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += bf16_to_f32(b[i / plane % channels]);
  return y;
}

ops::F32Buffer bf16_conv_bias(const ops::ConvGeometry& g, const kb_tensor& x,
                              const kb_tensor& weight, const kb_tensor& bias) {
  const std::size_t plane = output_plane(g), channels = static_cast<std::size_t>(g.out_channels);
  const std::size_t count = static_cast<std::size_t>(g.batch) * channels * plane;
  ops::F32Buffer y(count);
  ops::conv(g, x.data, KB_BF16, weight.data, KB_BF16, y.data(), KB_F32, ops::ConvLayout::kPlain);
  const auto* b = static_cast<const bf16_t*>(bias.data);
  float* v = y.data();
  for (std::size_t i = 0; i < count; ++i)
    v[i] = round_to_bf16(round_to_bf16(v[i]) + bf16_to_f32(b[i / plane % channels]));
  return y;
}

void conv_sample(const ops::ConvGeometry& g, const kb_tensor& x, const kb_tensor& weight,
                 std::size_t n, float* y, ops::ConvLayout layout,
                 const ops::ConvEpilogue& epilogue) {
  ops::ConvGeometry one = g;
  one.batch = 1;
  std::int64_t sample_in = g.in_channels;
  for (const std::int64_t extent : g.in_spatial) sample_in *= extent;
  ops::conv(one, static_cast<const bf16_t*>(x.data) + n * static_cast<std::size_t>(sample_in),
            KB_BF16, weight.data, KB_BF16, y, KB_F32, layout, epilogue);
}

NormStats reference_norm_stats(const double* v, std::size_t n, double eps) {
  double mean = 0, var = 0;
  for (std::size_t i = 0; i < n; ++i) mean += v[i];
  mean /= static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) var += (v[i] - mean) * (v[i] - mean);
  return {mean, 1.0 / std::sqrt(var / static_cast<double>(n) + eps)};
}

Bf16NormStats bf16_norm_stats(const float* v, std::size_t n, double eps) {
  const float mean_f32 = ops::sum_f32(v, n) / static_cast<float>(n);
  const float var =
      round_to_bf16(ops::sum_squared_deviations(v, n, mean_f32) / static_cast<float>(n));
  return {round_to_bf16(mean_f32),
          round_to_bf16(std::sqrt(round_to_bf16(var + static_cast<float>(eps))))};
}

void store(kb_tensor& out, std::size_t i, float value) {
  if (out.dtype == KB_BF16)
    static_cast<bf16_t*>(out.data)[i] = f32_to_bf16(value);
  else
    static_cast<float*>(out.data)[i] = value;
}

void store_scaled(kb_tensor& out, std::size_t offset, const float* v, std::size_t n, float scale,
                  float shift) {
  if (out.dtype == KB_BF16) {
    auto* o = static_cast<bf16_t*>(out.data) + offset;
    for (std::size_t i = 0; i < n; ++i) o[i] = f32_to_bf16(v[i] * scale + shift);
  } else {
    auto* o = static_cast<float*>(out.data) + offset;
    for (std::size_t i = 0; i < n; ++i) o[i] = v[i] * scale + shift;
  }
}

}  // namespace kbench::conv_kit
