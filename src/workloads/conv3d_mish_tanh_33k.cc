// 33k_Conv3d_Mish_Tanh: KernelBench level 2 problem 47 (PyTorch, translated to JAX): a 3x3x3 VALID
// 3-D convolution with bias, mish, then tanh.
//
// Operator  y = conv3d(x, weight) + bias[c];  out = tanh(y * tanh(log(1 + exp(y)))), the mish
//           written with softplus as log(1 + exp(y)), as the translation writes it.
// Inputs    x       bf16 (N, Cin, D, H, W)     uniform[0,1)
//           weight  bf16 (Cout, Cin, 3, 3, 3)  normal*0.02
//           bias    bf16 (Cout)                normal*0.02
// Output    out     bf16 (N, Cout, D-2, H-2, W-2)
// FLOPs     2*N*Cout*Do*Ho*Wo*Cin*27 (the activations are not counted); 204,055,511,040 at full
//           size (N=16, Cin=32, Cout=64, D=32, H=W=64).
// Character compute-bound 3-D convolution (K = Cin*27 = 864) with a purely elementwise epilogue
//           that fuses into the output tiles.
// Deviations
//   - The cpu preset is (N, D, H, W) = (4, 10, 34, 34) with the original's channels and kernel
//     (3.6 GFLOP). Smoke uses odd channel counts (5 -> 7) and spatial extents.
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

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {2, 5, 7, 5, 7, 9};
    case Size::kCpu:
      return {4, 32, 64, 10, 34, 34};
    case Size::kFull:
      break;
  }
  return {16, 32, 64, 32, 64, 64};
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
  problem.config = {
      {"batch_size", n}, {"in_channels", ci}, {"out_channels", co}, {"kernel_size", kKernel}};
  problem.inputs = {
      {{"x", KB_BF16, {n, ci, d, h, w}}, InitRule::uniform(0.0, 1.0)},
      {{"weight", KB_BF16, {co, ci, kKernel, kKernel, kKernel}}, InitRule::normal(0.02)},
      {{"bias", KB_BF16, {co}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {n, co, d - kKernel + 1, h - kKernel + 1, w - kKernel + 1}}};
  problem.flops = ops::conv_direct_flops(geometry_of(s));
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1 || in[0].rank != 5 || in[1].rank != 5)
    return std::nullopt;
  const Shape s{in[0].shape[0], in[0].shape[1], in[1].shape[0],
                in[0].shape[2], in[0].shape[3], in[0].shape[4]};
  const auto [n, ci, co, d, h, w] = s;
  if (d < kKernel || h < kKernel || w < kKernel ||
      !ops::matches(in[0], KB_BF16, {n, ci, d, h, w}) ||
      !ops::matches(in[1], KB_BF16, {co, ci, kKernel, kKernel, kKernel}) ||
      !ops::matches(in[2], KB_BF16, {co}) ||
      !ops::is_float_output(out[0], {n, co, d - kKernel + 1, h - kKernel + 1, w - kKernel + 1}))
    return std::nullopt;
  return s;
}

std::size_t volume_of(const Shape& s) {
  return static_cast<std::size_t>((s.depth - kKernel + 1) * (s.height - kKernel + 1) *
                                  (s.width - kKernel + 1));
}

int reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
              kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_F32) return 1;
  const std::vector<double> y =
      ops::conv_reference(geometry_of(*s), static_cast<const bf16_t*>(in[0].data),
                          static_cast<const bf16_t*>(in[1].data));
  const auto* bias = static_cast<const bf16_t*>(in[2].data);
  const std::size_t volume = volume_of(*s);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double v =
        y[i] + bf16_to_f32(bias[i / volume % static_cast<std::size_t>(s->out_channels)]);
    o[i] = static_cast<float>(std::tanh(v * std::tanh(std::log1p(std::exp(v)))));
  }
  return 0;
}

// What a fusing compiler emits: one 3-D convolution whose output tiles get the bias, mish and tanh
// (oneDNN bias + eltwise_mish + eltwise_tanh) before their single store, reordered to NCDHW in the
// output dtype.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s) return 1;
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, out[0].data, out[0].dtype,
            ops::ConvLayout::kPlain,
            {bias.data(), {{ops::ConvPostOp::Kind::kMish}, {ops::ConvPostOp::Kind::kTanh}}});
  return 0;
}

// The JAX program in bf16: the conv's bf16 result, + bias, exp, 1 + ., log, tanh, the product and
// the final tanh, each rounding to bf16.
int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> s = shape_of_call(in, num_inputs, out, num_outputs);
  if (!s || out[0].dtype != KB_BF16) return 1;
  const std::size_t volume = volume_of(*s);
  const std::size_t count = static_cast<std::size_t>(s->batch * s->out_channels) * volume;
  ops::F32Buffer y(count);
  ops::conv(geometry_of(*s), in[0].data, KB_BF16, in[1].data, KB_BF16, y.data(), KB_F32,
            ops::ConvLayout::kPlain);
  const auto* bias = static_cast<const bf16_t*>(in[2].data);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t i = 0; i < count; ++i) {
    const float b = bf16_to_f32(bias[i / volume % static_cast<std::size_t>(s->out_channels)]);
    const float v = round_to_bf16(round_to_bf16(y.data()[i]) + b);
    const float softplus =
        round_to_bf16(std::log(round_to_bf16(1.0f + round_to_bf16(std::exp(v)))));
    const float mish = round_to_bf16(v * round_to_bf16(std::tanh(softplus)));
    o[i] = f32_to_bf16(std::tanh(mish));
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kConv3dMishTanh33k;
const Workload kConv3dMishTanh33k = {
    .id = "33k",
    .name = "33k_Conv3d_Mish_Tanh",
    .group = Group::kKernelBenchL2,
    .source_model = "KernelBench Level 2 (PyTorch->JAX translation), problem 47_Conv3d_Mish_Tanh",
    .summary = "tanh(mish(conv3d_3x3x3_valid(x, weight) + bias)) on bf16 NCDHW",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    .tolerance = Tolerance{},  // JAXBench's allclose(atol=1e-2, rtol=1e-2), plus rel-L2 <= 1e-2
    .math = MathClass::kBf16Matmul,
    .bf16_program = bf16_program,
};

}  // namespace kbench
