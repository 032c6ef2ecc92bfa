// 21k_Gemm_Divide_Sum_Scaling: KernelBench level 2 problem 14 (PyTorch, translated to JAX): a
// linear layer without bias at HIGHEST precision, a division by 2, a sum over the features and a
// scaling.
//
// Operator  out = sum_j (lax.dot_general(x, weight.T, precision=HIGHEST) / 2)[:, j] * 1.5,
//           keepdims: one value per row.
// Inputs    x       bf16 (M, K)  uniform[0,1)        M = batch_size, K = input_size
//           weight  bf16 (N, K)  normal (unscaled)   N = hidden_size (nn.Linear layout)
// Output    out     bf16 (M, 1)
// Params    scaling_factor = 1.5 and the divisor 2 are constants of the program, not inputs.
// FLOPs     2*M*K*N (derived); 549,755,813,888 at full size (M=4096, K=8192, N=8192).
// Character compute-bound GEMM reduced to one number per row; algebraically a GEMV
//           (sum_j (x W^T)_ij = x_i . sum_j W_j, the spec's caveat), left to candidates.
// Numerics  precision=HIGHEST sets how the matmul computes, not what it returns: lax.dot_general of
//           bf16 operands returns bf16, so the original rounds every product y_ij to bf16
//           (XLA:CPU: an f32 dot, then a convert to bf16), halves it exactly, sums the N halves
//           in f32 (jnp.sum upcasts bf16), rounds the sum to bf16 and multiplies by 1.5 in bf16.
//           The row sums cancel (unscaled normal weights: rows of ~sqrt(K N / 3) from terms of
//           ~sqrt(K / 3)), so the N roundings leave an absolute error that |out| does not bound
//           (JAXBench's allclose failed the original itself on 13 of 20 smoke seeds).
// Tolerance atol 1e-2, rtol 1e-2, rel-L2 1e-2, plus term_rtol 2^-8 times each row's term magnitude
//           0.75 * sum_j |y_ij| (the terms in output units): rounding a term to bf16 moves it by
//           at most 2^-8 of itself, so the N roundings move the row by at most 2^-8 * sum_j
//           |term_j|. rtol covers the two roundings of the result (2 * 2^-8 < 1e-2); the f32
//           accumulation (error ~sqrt(N) * 2^-24 of the magnitude) fits in the rest. The term
//           magnitude is ~0.8 sqrt(N) / |z| times |out| (z ~ N(0, 1) per row), so the element
//           bound is ~10% of a typical |out| at cpu size: zeros, the mean, permuted rows stay far
//           outside it, and rel-L2 1e-2 rejects 5% noise.
// Deviations
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
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

constexpr linear::WeightLayout kLayout = linear::WeightLayout::kOutIn;
constexpr linear::Call kCall{.layout = kLayout, .output = linear::Out::kM1};
constexpr float kDivisor = 2.0f;
constexpr float kScalingFactor = 1.5f;

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  return linear::problem(
      shape,
      linear::layer_config(shape, {{"scaling_factor", double{kScalingFactor}}},
                           {.in = "input_size", .out = "hidden_size"}),
      linear::layer_inputs(shape, kLayout, {.weight = InitRule::normal(1.0), .bias = nullptr}),
      {shape.m, 1});
}

int reference(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  linear::row_sums(
      linear::reference(in[0], in[1], kLayout, nullptr), shape, out[0], [](double v) { return v; },
      [](double total) { return total / kDivisor * kScalingFactor; });
  return 0;
}

// What a fusing compiler emits: the f32 GEMM with the division fused into its epilogue (alpha =
// 1/2, exact), then one loop fusion per row summing and scaling. Only the (M, 1) result is rounded
// to the output dtype.
int baseline(const linear::Shape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  ops::ScratchMatrix y =
      linear::f32_gemm(in[0], in[1], kLayout, nullptr, {.alpha = 1.0f / kDivisor});
  linear::reduce_rows(
      y, out[0], [](const float* row, std::size_t n) { return ops::sum(row, n) * kScalingFactor; });
  return 0;
}

// The original's arithmetic: each product rounded to bf16, halved (exact), summed in f32, the sum
// rounded to bf16, times 1.5 rounded to bf16.
int bf16_program(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  linear::row_sums(
      linear::bf16_program(in[0], in[1], kLayout, nullptr), shape, out[0],
      [](float v) { return v / kDivisor; },
      [](float total) { return round_to_bf16(total) * kScalingFactor; });
  return 0;
}

// The rule's term magnitude per row: 1.5 * sum_j |y_ij| / 2, the N products the original rounds
// before it sums them, in output units (f32 products; the rounded ones differ by at most 2^-8).
int term_magnitude(const linear::Shape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  ops::ScratchMatrix y =
      linear::f32_gemm(in[0], in[1], kLayout, nullptr, {.alpha = kScalingFactor / kDivisor});
  linear::reduce_rows(y, out[0],
                      [](const float* row, std::size_t n) { return ops::abs_sum(row, n); });
  return 0;
}

using Programs = CheckedPrograms<linear::shape_of_call<kCall>, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemmDivideSumScaling21k = with_programs<Programs>({
    .name = "21k_Gemm_Divide_Sum_Scaling",
    .kernelbench_problem = 14,
    .summary = "row sums of (x @ weight.T) / 2, times 1.5: HIGHEST-precision GEMM -> (M,1)",
    .problem = make_problem,
    // JAXBench's allclose(atol=1e-2, rtol=1e-2) and rel-L2 <= 1e-2, plus the rounded terms' share
    // (the header's Tolerance note).
    .tolerance = Tolerance{.term_rtol = kBf16UnitRoundoff},
    .term_magnitude =
        checked_entry<linear::shape_of_call<kCall>, term_magnitude, OutputDtype::kF32>,
    .scaffold = scaffolds::k21k_Gemm_Divide_Sum_Scaling,
});

}  // namespace kbench
