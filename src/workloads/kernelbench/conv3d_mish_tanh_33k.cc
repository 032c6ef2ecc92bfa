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
#include <utility>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "scaffolds.h"
#include "workloads/kit/conv_layer.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using Shape = conv_kit::Shape3d;
constexpr std::int64_t kKernel = 3;

constexpr Presets<Shape> kPresets = {
    .smoke = {2, 5, 7, 5, 7, 9},
    .cpu = {4, 32, 64, 10, 34, 34},
    .full = {16, 32, 64, 32, 64, 64},
};

constexpr auto geometry_of = conv_kit::valid_geometry<kKernel, Shape>;

Problem make_problem(Size size) {
  const ops::ConvGeometry g = geometry_of(kPresets.at(size));
  Problem problem =
      conv_kit::problem(g, InitRule::uniform(0.0, 1.0), "weight", InitRule::normal(0.02));
  conv_kit::add_vectors(problem, g.out_channels, {{"bias", InitRule::normal(0.02)}});
  return conv_kit::with_output(std::move(problem), conv_kit::output_extents(g));
}

constexpr auto shape_of_call = conv_kit::shape_of_call<Shape, geometry_of, 1>;

int reference(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const std::vector<double> y = conv_kit::reference(geometry_of(s), in[0], in[1], in[2]);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t i = 0; i < y.size(); ++i)
    o[i] = static_cast<float>(std::tanh(y[i] * std::tanh(std::log1p(std::exp(y[i])))));
  return 0;
}

// What a fusing compiler emits: one 3-D convolution whose output tiles get the bias, mish and tanh
// (oneDNN bias + eltwise_mish + eltwise_tanh) before their single store, reordered to NCDHW in the
// output dtype.
int baseline(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::conv(geometry_of(s), in[0].data, KB_BF16, in[1].data, KB_BF16, out[0].data, out[0].dtype,
            ops::ConvLayout::kPlain,
            {bias.data(), {{ops::ConvPostOp::Kind::kMish}, {ops::ConvPostOp::Kind::kTanh}}});
  return 0;
}

// The JAX program in bf16: the conv's bf16 result, + bias, exp, 1 + ., log, tanh, the product and
// the final tanh, each rounding to bf16.
int bf16_program(const Shape& s, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer y = conv_kit::bf16_conv_bias(geometry_of(s), in[0], in[1], in[2]);
  auto* o = static_cast<bf16_t*>(out[0].data);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float v = y.data()[i];
    const float softplus =
        round_to_bf16(std::log(round_to_bf16(1.0f + round_to_bf16(std::exp(v)))));
    const float mish = round_to_bf16(v * round_to_bf16(std::tanh(softplus)));
    o[i] = f32_to_bf16(std::tanh(mish));
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kConv3dMishTanh33k = with_programs<Programs>({
    .name = "33k_Conv3d_Mish_Tanh",
    .kernelbench_problem = 47,
    .summary = "tanh(mish(conv3d_3x3x3_valid(x, weight) + bias)) on bf16 NCDHW",
    .problem = make_problem,
    .scaffold = scaffolds::k33k_Conv3d_Mish_Tanh,
});

}  // namespace kbench
