// 20k_Gemm_Multiply_LeakyReLU: KernelBench level 2 problem 12 (PyTorch, translated to JAX):
// a linear layer, a constant multiplier, then LeakyReLU with slope 0.1.
//
// Operator  y = (x @ weight + bias) * 2.0; out = where(y >= 0, y, 0.1 y).
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.02
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM with a two-step elementwise epilogue a fused kernel can hide;
//           x @ weight is signed (about half the elements take the 0.1 slope).
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`, not PyTorch's
//     nn.Linear (out_features, in_features) layout.
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
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

constexpr float kMultiplier = 2.0f;     // config_full.multiplier
constexpr double kNegativeSlope = 0.1;  // config_full.negative_slope

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

Problem make_problem(Size size) {
  const auto [m, k, n] = shape_of(size);
  Problem problem;
  problem.config = {{"batch_size", m},
                    {"in_features", k},
                    {"out_features", n},
                    {"multiplier", double{kMultiplier}},
                    {"negative_slope", kNegativeSlope}};
  problem.inputs = {
      {{"x", KB_BF16, {m, k}}, InitRule::uniform(0.0, 1.0)},
      {{"weight", KB_BF16, {k, n}}, InitRule::normal(0.02)},
      {{"bias", KB_BF16, {n}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {m, n}}};
  problem.flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The inputs after x and weight: bias (N).
constexpr std::initializer_list<Extent> kVectors = {Extent::kColumns};

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  const double scaled = (y + v[0][j]) * kMultiplier;
  return scaled >= 0 ? scaled : kNegativeSlope * scaled;
}

int reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
              kb_tensor* out, std::int32_t num_outputs) {
  return linear_epilogue::reference(in, num_inputs, out, num_outputs, kVectors, epilogue);
}

// What a fusing compiler emits: one GEMM whose epilogue adds the bias, doubles and applies the
// leaky ReLU to each output tile before its single bf16 store.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  if (!linear_epilogue::shape_of_call(in, num_inputs, out, num_outputs, kVectors)) return 1;
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false,
            ops::mutable_matrix_of(out[0]),
            {.bias = bias.data(),
             .post_ops = {ops::PostOp::scalar(ops::BinaryOp::kMultiply, kMultiplier),
                          ops::PostOp::leaky_relu(static_cast<float>(kNegativeSlope))}});
  return 0;
}

// The JAX program's ops on bf16 tensors: (x @ weight) + bias, * 2.0, where(y >= 0, y, 0.1 * y),
// each rounded; the weakly typed 0.1 is a bf16 constant.
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  const float scaled = bf16r(bf16r(y + v[0][j]) * kMultiplier);
  return scaled >= 0.0f ? scaled : bf16r(bf16r(static_cast<float>(kNegativeSlope)) * scaled);
}

int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  return linear_epilogue::bf16_program(in, num_inputs, out, num_outputs, kVectors, program_ops);
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kGemmMultiplyLeakyRelu20k;
const Workload kGemmMultiplyLeakyRelu20k = {
    .id = "20k",
    .name = "20k_Gemm_Multiply_LeakyReLU",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem 12_Gemm_Multiply_LeakyReLU",
    .summary =
        "leaky_relu((x @ weight + bias) * 2.0, 0.1): bf16 (M,K) x (K,N) GEMM, fused epilogue",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    .tolerance = Tolerance{},  // JAXBench allclose(atol=1e-2, rtol=1e-2), plus rel-L2 <= 1e-2
    .bf16_program = bf16_program,
};

}  // namespace kbench
