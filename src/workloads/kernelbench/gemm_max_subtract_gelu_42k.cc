// 42k_Gemm_Max_Subtract_GELU: KernelBench level 2 problem 80 (PyTorch, translated to JAX, operator
// as changed in PR #76): a linear layer, the subtraction of each row's maximum, and a GELU.
//
// Operator  v = x @ weight + bias;  out = gelu(v - max_j v[:, j])  (keepdims max, per row),
//           gelu(u) = 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))) (jax.nn.gelu's default).
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.1  (spec: normal*0.02; see Deviations)
// Output    out     bf16 (M, N)
// Params    max_dim = 1 (the feature axis): a constant of the program.
// FLOPs     2*M*K*N (derived); 549,755,813,888 at full size (M=4096, K=8192, N=8192).
// Character compute-bound GEMM whose epilogue needs a row statistic first: the row's maximum is
//           known only once the whole row is computed.
// Numerics  The faithful program rounds x @ weight and + bias to bf16, subtracts the max and runs
//           jax.nn.gelu op by op on bf16, its constants bf16 too (see bf16_program): XLA:CPU keeps
//           every bf16 rounding of the eight primitives (its compiled HLO converts after each; an
//           earlier version of this file assumed one f32 fusion rounded once, which XLA:CPU does
//           not do). 1 + tanh cancels for u < 0, so these roundings cost rel-L2 0.011 at cpu size
//           and 0.047 at full size (16 full-size rows, jax 0.10.2), against 0.004 / 0.013 for
//           an f32 GELU rounded once.
// Tolerance atol 3e-2, rel-L2 2.5e-2 (rtol stays 1e-2). Every output depends on v - max, and v is
//           rounded to bf16 at its own magnitude (|v| up to ~4-5 at full size, half an ulp 0.016)
//           before the subtraction cancels it: an absolute error of up to ~0.016 * gelu'(u),
//           independent of the output's size, on outputs of at most 0.17. Measured worst |diff|
//           and rel-L2 of the op-by-op program: 0.0037 (smoke, 20 seeds) and 0.013 (cpu, the
//           original itself on 3 seeds); the closest degenerate (oracle + 5% noise, rel-L2 0.050)
//           is rejected 2x. Open at full size: the original's own arithmetic reaches rel-L2 0.047
//           there, over this bound, and no bound on the relative L2 error could admit it and
//           still reject 5% noise (docs/workloads.md, 42k).
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`. The cpu preset is
//     (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - No non-degeneracy change: every output is gelu of a value <= 0, in [-0.17, 0], but rows
//     differ, so permuted rows and the mean are rejected (rel-L2 0.3-0.45).
//   - bias normal*0.1 instead of normal*0.02: an output computed without it (at 0) came to 2.5
//     (smoke) and 0.94 (cpu: inside the rule) of the rule's bound at its worst over 10 smoke and 2
//     cpu seeds, too close for the rule to be sure to notice a kernel that drops it; now 11.6 and
//     4.6 (suite_test, docs/workloads.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/jnp_bf16.h"
#include "ops/rows.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr const linear::Call& kCall = linear::kBiasCall;
constexpr linear::WeightLayout kLayout = kCall.layout;
constexpr std::int64_t kMaxDim = 1;  // config_full.max_dim: the max runs over the features

Problem make_problem(Size size) {
  return linear::bias_layer_problem(linear::kPresets.at(size), {{"max_dim", kMaxDim}}, {},
                                    {.bias_init = InitRule::normal(0.1)});
}

int reference(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  const std::vector<double> v = linear::reference(in[0], in[1], kLayout, &in[2]);
  auto* y = static_cast<float*>(out[0].data);
  const double scale = std::sqrt(2.0 / M_PI);
  for (std::int64_t i = 0; i < m; ++i) {
    const double* row = v.data() + i * n;
    const double max = *std::max_element(row, row + n);
    for (std::int64_t j = 0; j < n; ++j) {
      const double u = row[j] - max;
      y[i * n + j] =
          static_cast<float>(0.5 * u * (1.0 + std::tanh(scale * (u + 0.044715 * u * u * u))));
    }
  }
  return 0;
}

// What a fusing compiler emits: the GEMM with the bias fused into its epilogue, into f32, then one
// loop fusion per row: its maximum, then gelu(v - max) written once in the output dtype.
int baseline(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  ops::ScratchMatrix v = linear::f32_gemm(in[0], in[1], kLayout, &in[2]);
  const auto len = static_cast<std::size_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const auto* row = static_cast<const float*>(v.row(i));
    const float max = ops::max_value(row, len);
    if (out[0].dtype == KB_BF16)
      ops::gelu_tanh_shifted(row, max, static_cast<bf16_t*>(out[0].data) + i * n, len);
    else
      ops::gelu_tanh_shifted(row, max, static_cast<float*>(out[0].data) + i * n, len);
  }
  return 0;
}

// The JAX program on bf16 tensors: x @ weight (bf16), + bias (bf16), the row max, v - max (bf16),
// then jax.nn.gelu in bf16 ops.
int bf16_program(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  const std::vector<float> v = linear::bf16_program(in[0], in[1], kLayout, &in[2]);
  for (std::int64_t i = 0; i < m; ++i) {
    const float* row = v.data() + i * n;
    const float max = *std::max_element(row, row + n);
    for (std::int64_t j = 0; j < n; ++j)
      linear::store(out[0], i * n + j, ops::jnp::gelu_tanh(round_to_bf16(row[j] - max)));
  }
  return 0;
}

using Programs = CheckedPrograms<linear::shape_of_call<kCall>, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemmMaxSubtractGelu42k = with_programs<Programs>({
    .name = "42k_Gemm_Max_Subtract_GELU",
    .kernelbench_problem = 80,
    .summary = "gelu(v - rowmax(v)), v = x @ weight + bias: bf16 (M,K) x (K,N) GEMM -> (M,N)",
    .problem = make_problem,
    // atol 3e-2 and rel-L2 2.5e-2: see the header's Tolerance note.
    .tolerance = {.atol = 3e-2, .rtol = 1e-2, .max_rel_l2 = 2.5e-2},
    .scaffold = scaffolds::k42k_Gemm_Max_Subtract_GELU,
});

}  // namespace kbench
