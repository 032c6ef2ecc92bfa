// 38k_Matmul_Dropout_Softmax: KernelBench level 2 problem 66 (PyTorch, translated to JAX): a linear
// layer, dropout (skipped: inference), softmax over the features.
//
// Operator  out = softmax(x @ weight.T + bias, axis=1); dropout(p=0.2) is the identity at
//           inference, as in the JAX translation.
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (N, K)  normal*0.02    N = out_features (nn.Linear's (out, in) layout)
//           bias    bf16 (N)     normal*0.1  (spec: normal*0.02; see Deviations)
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the bias and softmax are not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM feeding a row softmax over all N features, which no GEMM tile
//           epilogue can finish alone.
// Deviations
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - Every softmax value is ~1/N (1e-4 at full size, 7e-4 at cpu size), far below the elementwise
//     atol of 1e-2, so allclose accepts any output near zero (the spec's caveat). The rel-L2 bound
//     of the default tolerance is what rejects wrong outputs here; no input change is needed: the
//     logits x @ weight.T carry a per-column part (0.5 * sum_k weight[j, k], sd 0.01 sqrt(K)) and
//     a per-row part (sd 0.02 sqrt(K / 12)), so softmax rows are far from uniform (the oracle's
//     mean is off by rel-L2 ~0.43 at cpu size, rows rotated by one by ~0.32) against the bf16
//     program's 0.004.
//   - bias normal*0.1 instead of normal*0.02: an output computed without it (at 0) came to 1.6
//     (smoke) and 2.0 (cpu) of the rule's bound at its worst over 10 smoke and 2 cpu seeds, too
//     close for the rule to be sure to notice a kernel that drops it; now 7.7 and 10 (suite_test,
//     docs/workloads.md).
#include <cstdint>
#include <optional>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/jnp_bf16.h"
#include "ops/rows.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/gemm_rows.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using gemm_rows::Shape;
using gemm_rows::WeightLayout;

// config_full.dropout_p: the original skips dropout (inference), so the value is unused.
constexpr double kDropoutP = 0.2;

constexpr WeightLayout kLayout = WeightLayout::kOutIn;

Problem make_problem(Size size) {
  const Shape shape = linear::kPresets.at(size);
  const auto [m, k, n] = shape;
  Problem problem = gemm_rows::linear_problem(shape, kLayout, "weight", InitRule::normal(0.02));
  problem.config.push_back({"dropout_p", kDropoutP});
  problem.inputs.push_back({{"bias", KB_BF16, {n}}, InitRule::normal(0.1)});
  gemm_rows::finish_row_problem(problem, shape);
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype), or
// nullopt.
constexpr auto shape_of_call = gemm_rows::plain_call<kLayout, 1>;

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  gemm_rows::softmax_reference(shape, kLayout, in, out[0], [](double*, std::int64_t) {});
  return 0;
}

// What a fusing compiler emits: the GEMM with the bias fused, then a softmax pass per row.
int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  gemm_rows::softmax_baseline(in, shape, kLayout, ops::Activation::kNone, out[0]);
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result, the bias add rounded, then
// jax.nn.softmax op by op in bf16.
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  gemm_rows::bf16_softmax_program(in, shape, kLayout, out[0], [](float v) { return v; });
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kMatmulDropoutSoftmax38k = with_programs<Programs>({
    .name = "38k_Matmul_Dropout_Softmax",
    .kernelbench_problem = 66,
    .summary = "softmax(x @ weight.T + bias) over features (dropout is the identity at inference)",
    .problem = make_problem,
    .scaffold = scaffolds::k38k_Matmul_Dropout_Softmax,
});

}  // namespace kbench
