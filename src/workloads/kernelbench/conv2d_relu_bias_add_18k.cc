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
#include <utility>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/conv_layer.h"
#include "workloads/kit/entry.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using Shape = conv_kit::Shape2d;
constexpr std::int64_t kKernel = 3;

constexpr auto geometry_of = conv_kit::valid_geometry<kKernel, Shape>;

Problem make_problem(Size size) {
  const ops::ConvGeometry g = geometry_of(conv_kit::kPresets2d.at(size));
  Problem problem =
      conv_kit::problem(g, InitRule::uniform(0.0, 1.0), "weight", InitRule::normal(0.02));
  conv_kit::add_vectors(problem, g.out_channels, {{"conv_bias", InitRule::normal(0.02)}});
  problem.inputs.push_back({{"bias", KB_BF16, {g.out_channels, 1, 1}}, InitRule::normal(0.02)});
  return conv_kit::with_output(std::move(problem), conv_kit::output_extents(g));
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<ops::ConvGeometry> g =
      conv_kit::geometry_of_call(in, num_inputs, num_outputs, 4, geometry_of({}));
  if (!g || !conv_kit::vectors_match(in + 2, 1, g->out_channels) ||
      !ops::matches(in[3], KB_BF16, {g->out_channels, 1, 1}) ||
      !conv_kit::is_float_output(out[0], conv_kit::output_extents(*g)))
    return std::nullopt;
  return conv_kit::shape_of<Shape>(*g);
}

int reference(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const std::vector<double> y = conv_kit::reference(g, in[0], in[1], in[2]);
  const auto* bias = static_cast<const bf16_t*>(in[3].data);
  const std::size_t plane = conv_kit::output_plane(g);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double v = y[i];
    o[i] = static_cast<float>(
        (v > 0 ? v : 0) + bf16_to_f32(bias[i / plane % static_cast<std::size_t>(s.out_channels)]));
  }
  return 0;
}

// What a fusing compiler emits: one convolution whose output tiles get the conv bias, the ReLU and
// the second bias before their single store (oneDNN bias + post-ops), reordered to NCHW in the
// output dtype.
int baseline(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer conv_bias = ops::load_f32(in[2]);
  const ops::F32Buffer bias = ops::load_f32(in[3]);
  ops::ConvEpilogue epilogue{
      conv_bias.data(),
      {{ops::ConvPostOp::Kind::kRelu}, {ops::ConvPostOp::Kind::kAddPerChannel, bias.data()}}};
  ops::conv(geometry_of(s), in[0].data, KB_BF16, in[1].data, KB_BF16, out[0].data, out[0].dtype,
            ops::ConvLayout::kPlain, epilogue);
  return 0;
}

// The JAX program in bf16: the conv's bf16 result (f32 sums rounded once), then each elementwise op
// on bf16 tensors rounding its result.
int bf16_program(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::ConvGeometry g = geometry_of(s);
  const ops::F32Buffer y = conv_kit::bf16_conv_bias(g, in[0], in[1], in[2]);
  const std::size_t plane = conv_kit::output_plane(g);
  const auto* bias = static_cast<const bf16_t*>(in[3].data);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float v = y.data()[i];
    o[i] = f32_to_bf16((v > 0 ? v : 0.0f) +
                       bf16_to_f32(bias[i / plane % static_cast<std::size_t>(s.out_channels)]));
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kConv2dReluBiasAdd18k = with_programs<Programs>({
    .name = "18k_Conv2D_ReLU_BiasAdd",
    .kernelbench_problem = 1,
    .summary = "relu(conv2d_3x3_valid(x, weight) + conv_bias) + bias on bf16 NCHW",
    .problem = make_problem,
    .scaffold = scaffolds::k18k_Conv2D_ReLU_BiasAdd,
});

}  // namespace kbench
