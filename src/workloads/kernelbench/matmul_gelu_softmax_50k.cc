// 50k_Matmul_GELU_Softmax: KernelBench level 2 problem 99 (PyTorch, translated to JAX): a linear
// layer, GELU, softmax over the features.
//
// Operator  out = softmax(gelu(x @ weight + bias), axis=1), gelu = jax.nn.gelu's default tanh
//           form 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))).
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features (the translation's x @ weight)
//           bias    bf16 (N)     normal*0.1  (spec: normal*0.02; see Deviations)
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the bias, GELU and softmax are not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM; the GELU fuses into its epilogue, the row softmax over all N
//           features cannot.
// Deviations
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - Every softmax value is ~1/N (1e-4 at full size, 7e-4 at cpu size), far below the elementwise
//     atol of 1e-2, so allclose accepts any output near zero (the spec's caveat). The rel-L2 bound
//     of the default tolerance is what rejects wrong outputs here; no input change is needed: the
//     pre-GELU values x @ weight carry a per-column part (0.5 * sum_k weight[k, j], sd 0.01
//     sqrt(K)) and a per-row part (sd 0.02 sqrt(K / 12)); GELU flattens the negative half, yet the
//     softmax rows stay far from uniform (the oracle's mean is off by rel-L2 ~0.29 at cpu size,
//     rows rotated by one by ~0.23) against the bf16 program's 0.004.
//   - bias normal*0.1 instead of normal*0.02: an output computed without it (at 0) came to 0.81
//     (smoke: inside the rule) and 1.4 (cpu) of the rule's bound at its worst over 10 smoke and 2
//     cpu seeds, too close for the rule to be sure to notice a kernel that drops it; now 4.0 and
//     7.2 (suite_test, docs/workloads.md).
#include <cmath>
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

constexpr WeightLayout kLayout = WeightLayout::kInOut;

Problem make_problem(Size size) {
  const Shape shape = linear::kPresets.at(size);
  const auto [m, k, n] = shape;
  Problem problem = gemm_rows::linear_problem(shape, kLayout, "weight", InitRule::normal(0.02));
  problem.inputs.push_back({{"bias", KB_BF16, {n}}, InitRule::normal(0.1)});
  gemm_rows::finish_row_problem(problem, shape);
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype), or
// nullopt.
constexpr auto shape_of_call = gemm_rows::plain_call<kLayout, 1>;

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  gemm_rows::softmax_reference(shape, kLayout, in, out[0], [](double* logits, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double v = logits[j];
      logits[j] = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    }
  });
  return 0;
}

// What a fusing compiler emits: the GEMM with the bias and GELU fused, then a softmax pass per row.
int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  gemm_rows::softmax_baseline(in, shape, kLayout, ops::Activation::kGeluTanh, out[0]);
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result, the bias add rounded, jax.nn.gelu and
// jax.nn.softmax op by op in bf16.
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  gemm_rows::bf16_softmax_program(in, shape, kLayout, out[0], ops::jnp::gelu_tanh);
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kMatmulGeluSoftmax50k = with_programs<Programs>({
    .name = "50k_Matmul_GELU_Softmax",
    .kernelbench_problem = 99,
    .summary = "softmax(gelu(x @ weight + bias)) over features, tanh-form GELU",
    .problem = make_problem,
    .scaffold = scaffolds::k50k_Matmul_GELU_Softmax,
});

}  // namespace kbench
