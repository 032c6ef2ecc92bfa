// 47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh: KernelBench level 2 problem 95 (PyTorch, translated to
// JAX): a linear layer, a learned per-feature add, then Swish, tanh, GELU and a hardtanh clip.
//
// Operator  y = x @ weight + bias + add_value; out = clip(gelu(tanh(swish(y))), -1, 1),
//           swish(y) = y sigmoid(y), gelu = jax.nn.gelu's default tanh form.
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.02
//           add_value bf16 (N)   normal*0.02
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM with a long transcendental epilogue (exp, two tanh) a fused kernel
//           can hide.
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`, not PyTorch's
//     nn.Linear (out_features, in_features) layout.
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - GELU is jax.nn.gelu's default (approximate=True, the tanh form), as the spec's other JAX
//     translations note; PyTorch's original uses the erf form.
//   - Not changed: the final clip to [-1, 1] is the identity, as in the original: swish >= -0.28,
//     so tanh(swish) lies in (-0.28, 1) and its GELU in (-0.11, 0.85).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/jnp_bf16.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using linear::bf16r;
using linear::Extent;
using linear::Vectors;

// x * sigmoid(x) on a bf16 tensor: the sigmoid rounded, then the product.
float swish_bf16(float v) {
  return bf16r(v * bf16r(1.0f / (1.0f + std::exp(-v))));
}

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  return linear::problem(
      shape, linear::layer_config(shape),
      linear::layer_inputs(shape, linear::WeightLayout::kInOut, {},
                           {{{"add_value", KB_BF16, {shape.n}}, InitRule::normal(0.02)}}),
      {shape.m, shape.n});
}

// The inputs after x and weight: bias (N), add_value (N).
constexpr Extent kVectors[] = {Extent::kColumns, Extent::kColumns};
constexpr linear::Call kCall{.vectors = kVectors};

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  const double linear = y + v[0][j] + v[1][j];
  const double swish = linear / (1.0 + std::exp(-linear));
  return std::min(std::max(linear::gelu_tanh(std::tanh(swish)), -1.0), 1.0);
}

// What a fusing compiler emits: one GEMM whose epilogue adds bias and add_value, then applies
// Swish, tanh, GELU and the clip to each output tile before its single bf16 store.
int baseline(const linear::Shape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer add_value = ops::load_f32(in[3]);
  linear::gemm(
      in[0], in[1], kCall.layout, &in[2], ops::mutable_matrix_of(out[0]),
      {.post_ops = {ops::PostOp::column(ops::BinaryOp::kAdd, add_value.data()),
                    ops::PostOp::act(ops::Activation::kSilu),
                    ops::PostOp::act(ops::Activation::kTanh),
                    ops::PostOp::act(ops::Activation::kGeluTanh), ops::PostOp::clip(-1.0f, 1.0f)}});
  return 0;
}

// The JAX program's ops on bf16 tensors: (x @ weight) + bias, + add_value, swish, tanh, gelu,
// clip (exact), each rounded.
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  const float linear = bf16r(bf16r(y + v[0][j]) + v[1][j]);
  const float activated = ops::jnp::gelu_tanh(bf16r(std::tanh(swish_bf16(linear))));
  return std::min(std::max(activated, -1.0f), 1.0f);
}

using Programs =
    linear::EpiloguePrograms<kCall, epilogue, checked_entry<linear::shape_of_call<kCall>, baseline>,
                             program_ops>;

}  // namespace

const Workload kMatmulAddSwishTanhGeluHardtanh47k = with_programs<Programs>({
    .name = "47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh",
    .kernelbench_problem = 95,
    .summary =
        "clip(gelu(tanh(swish(x @ weight + bias + add_value))), -1, 1): bf16 GEMM, fused epilogue",
    .problem = make_problem,
    .scaffold = scaffolds::k47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh,
});

}  // namespace kbench
