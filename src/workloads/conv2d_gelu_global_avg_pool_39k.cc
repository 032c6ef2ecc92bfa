// 39k_Conv2d_GELU_GlobalAvgPool: KernelBench level 2 problem 67 (PyTorch, translated to JAX): a 3x3
// VALID convolution with bias, GELU, then the mean over each output plane.
//
// Operator  out[n, c] = mean_hw(gelu(conv2d(x, weight) + bias[c])), gelu the tanh approximation
//           (jax.nn.gelu's default, as the translation calls it).
// Inputs    x       bf16 (N, Cin, H, W)     uniform[0,1) + a per-(sample, channel) offset
//                                           normal(0,1) (see Deviations)
//           weight  bf16 (Cout, Cin, 3, 3)  normal*0.02
//           bias    bf16 (Cout)             normal*0.02
// Output    out     bf16 (N, Cout)
// FLOPs     2*N*Cout*Ho*Wo*Cin*3*3 (GELU and the mean are not counted); 76,106,170,368 at full size
//           (N=128, Cin=8, Cout=64, H=W=256).
// Character a convolution with a short reduction (K = Cin*9 = 72) whose output (8x the input's
//           values) is consumed at once by the pool: 144 FLOPs per output value, so the GEMM's
//           weight reuse is low and the output stream matters; the fused kernel never writes it.
// Deviations
//   - x gets one offset per (sample, channel), normal(0,1), on top of the original's
//     uniform[0,1): with iid inputs every sample's pooled output is the same to ~1e-3 (the mean of
//     64K pixels), so an output with the samples permuted, or one sample copied to all, passed.
//   - The cpu preset is (N, H, W) = (8, 146, 146) with the original's channels and kernel
//     (1.5 GFLOP). Smoke uses odd channel counts (5 -> 11) and spatial extents.
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "workloads/conv.h"
#include "workloads/jnp_bf16.h"
#include "workloads/matmul_ops.h"
#include "workloads/ops.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

struct Shape {
  std::int64_t batch, in_channels, out_channels, height, width;
};
constexpr std::int64_t kKernel = 3;

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {3, 5, 11, 13, 15};
    case Size::kCpu:
      return {8, 8, 64, 146, 146};
    case Size::kFull:
      break;
  }
  return {128, 8, 64, 256, 256};
}

ops::ConvGeometry geometry_of(const Shape& s) {
  return {s.batch, s.in_channels, s.out_channels, {s.height, s.width}, {kKernel, kKernel}};
}

Problem make_problem(Size size) {
  const Shape s = shape_of(size);
  const auto [n, ci, co, h, w] = s;
  Problem problem;
  problem.config = {
      {"batch_size", n}, {"in_channels", ci}, {"out_channels", co}, {"kernel_size", kKernel}};
  problem.inputs = {
      {{"x", KB_BF16, {n, ci, h, w}}, InitRule::structured(ops::fill_uniform_with_channel_offsets)},
      {{"weight", KB_BF16, {co, ci, kKernel, kKernel}}, InitRule::normal(0.02)},
      {{"bias", KB_BF16, {co}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {n, co}}};
  problem.flops = ops::conv_direct_flops(geometry_of(s));
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1 || in[0].rank != 4 || in[1].rank != 4)
    return std::nullopt;
  const Shape s{in[0].shape[0], in[0].shape[1], in[1].shape[0], in[0].shape[2], in[0].shape[3]};
  const auto [n, ci, co, h, w] = s;
  if (h < kKernel || w < kKernel || !ops::matches(in[0], KB_BF16, {n, ci, h, w}) ||
      !ops::matches(in[1], KB_BF16, {co, ci, kKernel, kKernel}) ||
      !ops::matches(in[2], KB_BF16, {co}) || !ops::is_float_output(out[0], {n, co}))
    return std::nullopt;
  return s;
}

std::size_t plane_of(const Shape& s) {
  return static_cast<std::size_t>((s.height - kKernel + 1) * (s.width - kKernel + 1));
}

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

int reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
              kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_F32) return 1;
  const std::vector<double> y =
      ops::conv_reference(geometry_of(*s), static_cast<const bf16_t*>(in[0].data),
                          static_cast<const bf16_t*>(in[1].data));
  const auto* bias = static_cast<const bf16_t*>(in[2].data);
  const std::size_t plane = plane_of(*s);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t p = 0; p * plane < y.size(); ++p) {
    const double b = bf16_to_f32(bias[p % static_cast<std::size_t>(s->out_channels)]);
    double sum = 0;
    for (std::size_t i = 0; i < plane; ++i) sum += gelu_tanh(y[p * plane + i] + b);
    o[p] = static_cast<float>(sum / static_cast<double>(plane));
  }
  return 0;
}

// What a fusing compiler emits: per sample, the convolution with bias and GELU fused into its
// output tiles (oneDNN bias + eltwise_gelu_tanh), written channels-last so the pool is a sum of
// contiguous channel rows per pixel, one pass over the output.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s) return 1;
  const std::size_t plane = plane_of(*s), channels = static_cast<std::size_t>(s->out_channels);
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  // One sample at a time: its conv output (5.3 MB at the cpu size) is pooled while it is still
  // in cache rather than after the whole batch's went to memory.
  Shape one = *s;
  one.batch = 1;
  const std::size_t sample_in = static_cast<std::size_t>(s->in_channels * s->height * s->width);
  ops::F32Buffer y(plane * channels);
  std::vector<float> sums(channels);
  for (std::int64_t n = 0; n < s->batch; ++n) {
    ops::conv(geometry_of(one),
              static_cast<const bf16_t*>(in[0].data) + static_cast<std::size_t>(n) * sample_in,
              KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32, ops::ConvLayout::kChannelsLast,
              {bias.data(), {{ops::ConvPostOp::Kind::kGeluTanh}}});
    sums.assign(channels, 0.0f);
    ops::add_rows(y.data(), plane, channels, channels, sums.data());
    for (std::size_t c = 0; c < channels; ++c) {
      const float mean = sums[c] / static_cast<float>(plane);
      if (out[0].dtype == KB_BF16)
        static_cast<bf16_t*>(out[0].data)[static_cast<std::size_t>(n) * channels + c] =
            f32_to_bf16(mean);
      else
        static_cast<float*>(out[0].data)[static_cast<std::size_t>(n) * channels + c] = mean;
    }
  }
  return 0;
}

// The JAX program in bf16: the conv's bf16 result, + bias, jax.nn.gelu's ops (cube, scale, add,
// scale, tanh, 1 + ., product) each rounded to bf16; the mean accumulated in f32 (jnp.mean upcasts
// bf16) and rounded.
int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_BF16) return 1;
  const std::size_t plane = plane_of(*s), channels = static_cast<std::size_t>(s->out_channels);
  const std::size_t planes = static_cast<std::size_t>(s->batch) * channels;
  ops::F32Buffer y(planes * plane);
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32,
            ops::ConvLayout::kPlain);
  const auto* bias = static_cast<const bf16_t*>(in[2].data);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t p = 0; p < planes; ++p) {
    const float b = bf16_to_f32(bias[p % channels]);
    float* v = y.data() + p * plane;
    for (std::size_t i = 0; i < plane; ++i)
      v[i] = jnp_bf16::gelu_tanh(round_to_bf16(round_to_bf16(v[i]) + b));
    o[p] = f32_to_bf16(ops::sum_f32(v, plane) / static_cast<float>(plane));
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kConv2dGeluGlobalAvgPool39k;
const Workload kConv2dGeluGlobalAvgPool39k = {
    .id = "39k",
    .name = "39k_Conv2d_GELU_GlobalAvgPool",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem 67_Conv2d_GELU_GlobalAvgPool",
    .summary = "mean_hw(gelu_tanh(conv2d_3x3_valid(x, weight) + bias)) on bf16 NCHW -> (N, Cout)",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    .tolerance = Tolerance{},  // JAXBench's allclose(atol=1e-2, rtol=1e-2), plus rel-L2 <= 1e-2
    .math = MathClass::kBf16Matmul,
    .bf16_program = bf16_program,
};

}  // namespace kbench
