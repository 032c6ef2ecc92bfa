// 18k_Conv2D_ReLU_BiasAdd: KernelBench level 2 problem 1 (PyTorch, translated to JAX): a 3x3 VALID
// convolution with its bias, a ReLU, then a second per-channel bias.
//
// Operator  out = relu(conv2d(x, weight) + conv_bias[c]) + bias[c, 0, 0]; the JAX translation
//           transposes NCHW -> NHWC and OIHW -> HWIO around lax.conv_general_dilated.
// Inputs    x          bf16 (N, Cin, H, W)    uniform[0,1)
//           weight     bf16 (Cout, Cin, 3, 3) normal*0.02
//           conv_bias  bf16 (Cout)            normal*0.02
//           bias       bf16 (Cout, 1, 1)      normal*0.02
// Output    out        bf16 (N, Cout, H-2, W-2)
// FLOPs     2*N*Cout*Ho*Wo*Cin*3*3 (the biases and ReLU are not counted); 299,649,466,368 at full
//           size (N=128, Cin=64, Cout=128, H=W=128).
// Character compute-bound convolution (K = Cin*9 = 576) with an elementwise epilogue that fuses
//           into the conv's output tiles.
// Deviations
//   - The cpu preset is (N, H, W) = (4, 82, 82) with the original's channels and kernel
//     (3.8 GFLOP).
//   - Smoke uses odd channel counts (13 -> 19) and spatial extents so every block edge is met.
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
  std::int64_t batch, in_channels, out_channels, height, width;
};
constexpr std::int64_t kKernel = 3;

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {2, 13, 19, 11, 13};
    case Size::kCpu:
      return {4, 64, 128, 82, 82};
    case Size::kFull:
      break;
  }
  return {128, 64, 128, 128, 128};
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
      {{"x", KB_BF16, {n, ci, h, w}}, InitRule::uniform(0.0, 1.0)},
      {{"weight", KB_BF16, {co, ci, kKernel, kKernel}}, InitRule::normal(0.02)},
      {{"conv_bias", KB_BF16, {co}}, InitRule::normal(0.02)},
      {{"bias", KB_BF16, {co, 1, 1}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {n, co, h - kKernel + 1, w - kKernel + 1}}};
  problem.flops = ops::conv_direct_flops(geometry_of(s));
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 4 || num_outputs != 1 || in[0].rank != 4 || in[1].rank != 4)
    return std::nullopt;
  const Shape s{in[0].shape[0], in[0].shape[1], in[1].shape[0], in[0].shape[2], in[0].shape[3]};
  const auto [n, ci, co, h, w] = s;
  if (h < kKernel || w < kKernel || !ops::matches(in[0], KB_BF16, {n, ci, h, w}) ||
      !ops::matches(in[1], KB_BF16, {co, ci, kKernel, kKernel}) ||
      !ops::matches(in[2], KB_BF16, {co}) || !ops::matches(in[3], KB_BF16, {co, 1, 1}) ||
      !ops::is_float_output(out[0], {n, co, h - kKernel + 1, w - kKernel + 1}))
    return std::nullopt;
  return s;
}

int reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
              kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_F32) return 1;
  const std::vector<double> y =
      ops::conv_reference(geometry_of(*s), static_cast<const bf16_t*>(in[0].data),
                          static_cast<const bf16_t*>(in[1].data));
  const auto* conv_bias = static_cast<const bf16_t*>(in[2].data);
  const auto* bias = static_cast<const bf16_t*>(in[3].data);
  const std::size_t plane = y.size() / static_cast<std::size_t>(s->batch * s->out_channels);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::size_t c = i / plane % static_cast<std::size_t>(s->out_channels);
    const double v = y[i] + bf16_to_f32(conv_bias[c]);
    o[i] = static_cast<float>((v > 0 ? v : 0) + bf16_to_f32(bias[c]));
  }
  return 0;
}

// What a fusing compiler emits: one convolution whose output tiles get the conv bias, the ReLU and
// the second bias before their single store (oneDNN bias + post-ops), reordered to NCHW in the
// output dtype.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s) return 1;
  const ops::F32Buffer conv_bias = ops::load_f32(in[2]);
  const ops::F32Buffer bias = ops::load_f32(in[3]);
  ops::ConvEpilogue epilogue{
      conv_bias.data(),
      {{ops::ConvPostOp::Kind::kRelu}, {ops::ConvPostOp::Kind::kAddPerChannel, bias.data()}}};
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, out[0].data, out[0].dtype,
            ops::ConvLayout::kPlain, epilogue);
  return 0;
}

// The JAX program in bf16: the conv's bf16 result (f32 sums rounded once), then each elementwise op
// on bf16 tensors rounding its result.
int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_BF16) return 1;
  const std::size_t count =
      static_cast<std::size_t>(s->batch * s->out_channels * (s->height - 2) * (s->width - 2));
  const std::size_t plane = count / static_cast<std::size_t>(s->batch * s->out_channels);
  ops::F32Buffer y(count);
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32,
            ops::ConvLayout::kPlain);
  const auto* conv_bias = static_cast<const bf16_t*>(in[2].data);
  const auto* bias = static_cast<const bf16_t*>(in[3].data);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t c = i / plane % static_cast<std::size_t>(s->out_channels);
    const float v = round_to_bf16(round_to_bf16(y.data()[i]) + bf16_to_f32(conv_bias[c]));
    o[i] = f32_to_bf16((v > 0 ? v : 0.0f) + bf16_to_f32(bias[c]));
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kConv2dReluBiasAdd18k;
const Workload kConv2dReluBiasAdd18k = {
    .id = "18k",
    .name = "18k_Conv2D_ReLU_BiasAdd",
    .group = Group::kKernelBenchL2,
    .source_model = "KernelBench Level 2 (PyTorch->JAX translation), problem 1_Conv2D_ReLU_BiasAdd",
    .summary = "relu(conv2d_3x3_valid(x, weight) + conv_bias) + bias on bf16 NCHW",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    .tolerance = Tolerance{},  // JAXBench's allclose(atol=1e-2, rtol=1e-2), plus rel-L2 <= 1e-2
    .math = MathClass::kBf16Matmul,
    .bf16_program = bf16_program,
};

}  // namespace kbench
