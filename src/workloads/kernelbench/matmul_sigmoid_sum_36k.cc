// 36k_Matmul_Sigmoid_Sum: KernelBench level 2 problem 56 (PyTorch, translated to JAX): a linear
// layer, a sigmoid, and a sum over the features.
//
// Operator  out = sum_j sigmoid(x @ weight + bias)[:, j], keepdims: one value per row.
// Inputs    x       bf16 (M, K)  uniform[-1,1)                 M = batch_size, K = input_size
//           weight  bf16 (K, N)  normal*1.5 sqrt(3/K) + sqrt(3/K)  N = hidden_size
//           bias    bf16 (N)     normal(0,1)
//           (the original: x uniform[0,1), weight and bias normal*0.02; see Deviations)
// Output    out     bf16 (M, 1)
// FLOPs     2*M*K*N (the sigmoid and the sum are not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM whose (M, N) result a fused kernel reduces without storing it.
// Deviations
//   - Non-degeneracy: x ~ uniform[-1,1) instead of [0,1), and weight ~ normal(mean sqrt(3/K),
//     std 0.02) instead of normal*0.02. With the original's i.i.d. zero-mean weight every row's
//     sigmoids are symmetric about 0.5 whatever x is, so each row sums to N/2 within ~0.3% at
//     every size (row spread 0.25 * 0.02 * sqrt(K N / 12) against N/2): the oracle's mean passes
//     rel-L2 1e-2, and bf16's own rounding of the sum (0.2-0.4%) is as large as the signal. The
//     shared mean of the weight gives row i a common shift sqrt(3/K) * sum_k x[i,k] of standard
//     deviation 1 (signed x keeps that shift centred on 0), so row sums spread over ~0.25-0.75 N.
//   - With that mean and std 0.02 the mean was the whole signal: an output computed with weight
//     at its mean, which needs no GEMM (x @ weight is then sqrt(3/K) times x's row sums), passed
//     the rule at smoke size (0.90 of the bound at the worst of 10 seeds), and one without bias
//     passed at every size (0.33 smoke, 0.39 cpu). weight's std is 1.5 sqrt(3/K) (x @ weight's
//     random part of std 1.5 against the row shift of std 1) and bias is normal(0, 1): those
//     outputs now fail by 18x and 8x at smoke, 35x and 17x at cpu size (suite_test,
//     docs/workloads.md).
//   - weight is (input_size, hidden_size), the JAX translation's `x @ weight`. The cpu preset is
//     (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/rows.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr linear::WeightLayout kLayout = linear::WeightLayout::kInOut;
constexpr linear::Call kCall{
    .layout = kLayout, .vectors = linear::kBiasOnly, .output = linear::Out::kM1};

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  return linear::problem(
      shape, linear::layer_config(shape, {}, {.in = "input_size", .out = "hidden_size"}),
      linear::layer_inputs(
          shape, kLayout,
          {.x = InitRule::uniform(-1.0, 1.0),
           .weight = InitRule::normal(1.5 * std::sqrt(3.0 / static_cast<double>(shape.k)),
                                      std::sqrt(3.0 / static_cast<double>(shape.k))),
           .bias_init = InitRule::normal(1.0)}),
      {shape.m, 1});
}

int reference(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  linear::row_sums(
      linear::reference(in[0], in[1], kLayout, &in[2]), shape, out[0],
      [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, [](double total) { return total; });
  return 0;
}

// What a fusing compiler emits: the GEMM with the bias fused into its epilogue, into f32, then one
// loop fusion per row summing the sigmoids. Only the (M, 1) result is rounded to the output dtype.
int baseline(const linear::Shape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  ops::ScratchMatrix y = linear::f32_gemm(in[0], in[1], kLayout, &in[2]);
  linear::reduce_rows(y, out[0],
                      [](const float* row, std::size_t n) { return ops::sum_sigmoid(row, n); });
  return 0;
}

// The JAX program on bf16 tensors: x @ weight (bf16), + bias (bf16), sigmoid (bf16), then the sum
// (accumulated in f32 as jnp.sum does for bf16, its result bf16).
int bf16_program(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  linear::row_sums(
      linear::bf16_program(in[0], in[1], kLayout, &in[2]), shape, out[0],
      [](float v) { return round_to_bf16(1.0f / (1.0f + std::exp(-v))); },
      [](float total) { return round_to_bf16(total); });
  return 0;
}

using Programs = CheckedPrograms<linear::shape_of_call<kCall>, reference, baseline, bf16_program>;

}  // namespace

const Workload kMatmulSigmoidSum36k = with_programs<Programs>({
    .name = "36k_Matmul_Sigmoid_Sum",
    .kernelbench_problem = 56,
    .summary = "sum over features of sigmoid(x @ weight + bias): bf16 (M,K) x (K,N) GEMM -> (M,1)",
    .problem = make_problem,
    .scaffold = scaffolds::k36k_Matmul_Sigmoid_Sum,
});

}  // namespace kbench
