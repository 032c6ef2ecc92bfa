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
#include <initializer_list>
#include <optional>

#include "workloads/gemm.h"
#include "workloads/linear_epilogue.h"
#include "workloads/ops.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

using linear_epilogue::bf16r;
using linear_epilogue::Extent;
using linear_epilogue::LinearShape;
using linear_epilogue::Vectors;

LinearShape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {29, 53, 47};  // no extent a multiple of 8 or 16: exercises every tile edge
    case Size::kCpu:
      return {768, 1536, 1536};
    case Size::kFull:
      break;
  }
  return {4096, 8192, 8192};
}

// x * sigmoid(x) on a bf16 tensor: the sigmoid rounded, then the product.
float swish_bf16(float v) {
  return bf16r(v * bf16r(1.0f / (1.0f + std::exp(-v))));
}

// jax.nn.gelu's default (approximate=True), each op on a bf16 tensor rounded:
// x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))), its constants bf16 (weakly typed).
float gelu_tanh_bf16(float v) {
  const float cube = bf16r(bf16r(v * v) * v);
  const float inner = bf16r(bf16r(0.7978845608028654f) * bf16r(v + bf16r(bf16r(0.044715f) * cube)));
  const float cdf = bf16r(0.5f * bf16r(1.0f + bf16r(std::tanh(inner))));
  return bf16r(v * cdf);
}

Problem make_problem(Size size) {
  const auto [m, k, n] = shape_of(size);
  Problem problem;
  problem.config = {{"batch_size", m}, {"in_features", k}, {"out_features", n}};
  problem.inputs = {
      {{"x", KB_BF16, {m, k}}, InitRule::uniform(0.0, 1.0)},
      {{"weight", KB_BF16, {k, n}}, InitRule::normal(0.02)},
      {{"bias", KB_BF16, {n}}, InitRule::normal(0.02)},
      {{"add_value", KB_BF16, {n}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {m, n}}};
  problem.flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The inputs after x and weight: bias (N), add_value (N).
constexpr std::initializer_list<Extent> kVectors = {Extent::kColumns, Extent::kColumns};

double gelu_tanh(double v) {
  return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
}

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  const double linear = y + v[0][j] + v[1][j];
  const double swish = linear / (1.0 + std::exp(-linear));
  return std::min(std::max(gelu_tanh(std::tanh(swish)), -1.0), 1.0);
}

int reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
              kb_tensor* out, std::int32_t num_outputs) {
  return linear_epilogue::reference(in, num_inputs, out, num_outputs, kVectors, epilogue);
}

// What a fusing compiler emits: one GEMM whose epilogue adds bias and add_value, then applies
// Swish, tanh, GELU and the clip to each output tile before its single bf16 store.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  if (!linear_epilogue::shape_of_call(in, num_inputs, out, num_outputs, kVectors)) return 1;
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  const ops::F32Buffer add_value = ops::load_f32(in[3]);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false,
            ops::mutable_matrix_of(out[0]),
            {.bias = bias.data(),
             .post_ops = {
                 ops::PostOp::column(ops::BinaryOp::kAdd, add_value.data()),
                 ops::PostOp::act(ops::Activation::kSilu), ops::PostOp::act(ops::Activation::kTanh),
                 ops::PostOp::act(ops::Activation::kGeluTanh), ops::PostOp::clip(-1.0f, 1.0f)}});
  return 0;
}

// The JAX program's ops on bf16 tensors: (x @ weight) + bias, + add_value, swish, tanh, gelu,
// clip (exact), each rounded.
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  const float linear = bf16r(bf16r(y + v[0][j]) + v[1][j]);
  const float activated = gelu_tanh_bf16(bf16r(std::tanh(swish_bf16(linear))));
  return std::min(std::max(activated, -1.0f), 1.0f);
}

int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  return linear_epilogue::bf16_program(in, num_inputs, out, num_outputs, kVectors, program_ops);
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kMatmulAddSwishTanhGeluHardtanh47k;
const Workload kMatmulAddSwishTanhGeluHardtanh47k = {
    .id = "47k",
    .name = "47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem "
        "95_Matmul_Add_Swish_Tanh_GELU_Hardtanh",
    .summary =
        "clip(gelu(tanh(swish(x @ weight + bias + add_value))), -1, 1): bf16 GEMM, fused epilogue",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    .tolerance = Tolerance{},  // JAXBench allclose(atol=1e-2, rtol=1e-2), plus rel-L2 <= 1e-2
    .bf16_program = bf16_program,
};

}  // namespace kbench
