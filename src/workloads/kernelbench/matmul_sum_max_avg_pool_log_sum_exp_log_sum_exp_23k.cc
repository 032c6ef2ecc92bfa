// 23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp: KernelBench level 2 problem 18 (PyTorch,
// translated to JAX): a linear layer, a sum over the features, then max, mean, logsumexp and
// logsumexp over the resulting size-1 axis.
//
// Operator  out = sum_j (x @ weight.T + bias)[:, j], keepdims -> (M, 1); the max / mean /
//           logsumexp / logsumexp that follow reduce a size-1 axis and are identities (in bf16
//           too: logsumexp(v) = v + log(exp(v - v)) = v + 0 exactly).
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (N, K)  normal*0.02    N = out_features (nn.Linear layout)
//           bias    bf16 (N)     normal*0.1  (spec: normal*0.02; see Deviations)
// Output    out     bf16 (M, 1)
// FLOPs     2*M*K*N (derived; the reductions are not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM whose (M, N) result is reduced to one number per row; algebraically
//           a GEMV (sum_j (x W^T)_ij = x_i . sum_j W_j, the spec's caveat), which kbench leaves to
//           candidates: the baseline computes what the program says.
// Tolerance atol 1e-2, rtol 1e-2, rel-L2 1.5e-2, plus term_rtol 2^-8 times each row's term
//           magnitude sum_j (|y_ij| + |y_ij + b_j|). The original rounds the (M, N) product to bf16
//           and the bias add again before summing, and the sum cancels (terms of rms 0.02
//           sqrt(K/3) of either sign), so its rounding error is absolute, not relative to a row's
//           value that may be near 0: each of the 2N roundings moves the sum by at most 2^-8 of
//           the value it rounds. rtol covers the rounding of the result. (Before this bound, a
//           fixed atol 3 sized for full size let any output within 3 of the oracle through at
//           smoke size, where rows are ~1.) The rel-L2 bound is 1.5e-2, not 1e-2: over 200 smoke
//           seeds the faithful program's rel-L2 (0.002-0.006 typically) reached 0.0106 once; the
//           closest degenerate, oracle + 5% noise, has 0.049, 3.3x the bound.
// Deviations
//   - The identities after the row sum are computed as what they are (nothing).
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - bias normal*0.1 instead of normal*0.02: an output computed without it (at 0) came to 1.8 of
//     the rule's bound at its worst over 2 cpu seeds (2.5 or more over 10 smoke seeds), too close
//     for the rule to be sure to notice a kernel that drops it; now 14 (smoke) and 8.2 (cpu)
//     (suite_test, docs/workloads.md).
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
constexpr linear::Call kCall{
    .layout = kLayout, .vectors = linear::kBiasOnly, .output = linear::Out::kM1};

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  return linear::problem(shape, linear::layer_config(shape),
                         linear::layer_inputs(shape, kLayout, {.bias_init = InitRule::normal(0.1)}),
                         {shape.m, 1});
}

// The row sums alone: the size-1 reductions after them are identities.
constexpr auto kIdentity = [](auto v) { return v; };

int reference(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  linear::row_sums(linear::reference(in[0], in[1], kLayout, &in[2]), shape, out[0], kIdentity,
                   kIdentity);
  return 0;
}

// What a fusing compiler emits: the GEMM with the bias fused into its epilogue, into f32, then one
// loop fusion per row summing it. Only the (M, 1) result is rounded to the output dtype.
int baseline(const linear::Shape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  ops::ScratchMatrix y = linear::f32_gemm(in[0], in[1], kLayout, &in[2]);
  linear::reduce_rows(y, out[0], [](const float* row, std::size_t n) { return ops::sum(row, n); });
  return 0;
}

// The JAX program on bf16 tensors: x @ weight.T (bf16), + bias (bf16), then the sum (accumulated in
// f32 as jnp.sum does for bf16, its result bf16); the size-1 reductions leave it unchanged.
int bf16_program(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  linear::row_sums(linear::bf16_program(in[0], in[1], kLayout, &in[2]), shape, out[0], kIdentity,
                   [](float total) { return round_to_bf16(total); });
  return 0;
}

// The rule's term magnitude per row: sum_j (|y_ij| + |y_ij + b_j|), the product and the bias add
// the original rounds to bf16 before it sums them (f32 values; the rounded ones differ by at most
// 2^-8).
int term_magnitude(const linear::Shape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::ScratchMatrix y = linear::f32_gemm(in[0], in[1], kLayout, nullptr);
  linear::reduce_rows(y, out[0], [&bias](const float* row, std::size_t n) {
    float total = 0;
    for (std::size_t j = 0; j < n; ++j)
      total += std::fabs(row[j]) + std::fabs(row[j] + bias.data()[j]);
    return total;
  });
  return 0;
}

using Programs = CheckedPrograms<linear::shape_of_call<kCall>, reference, baseline, bf16_program>;

}  // namespace

const Workload kMatmulSumMaxAvgPoolLogSumExpLogSumExp23k = with_programs<Programs>({
    .name = "23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp",
    .kernelbench_problem = 18,
    .summary = "row sums of x @ weight.T + bias (then size-1 identities): bf16 GEMM -> (M,1)",
    .problem = make_problem,
    // See the header's Tolerance note.
    .tolerance = {.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 1.5e-2, .term_rtol = kBf16UnitRoundoff},
    .term_magnitude =
        checked_entry<linear::shape_of_call<kCall>, term_magnitude, OutputDtype::kF32>,
    .scaffold = scaffolds::k23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp,
});

}  // namespace kbench
