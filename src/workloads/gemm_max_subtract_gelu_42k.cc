// 42k_Gemm_Max_Subtract_GELU: KernelBench level 2 problem 80 (PyTorch, translated to JAX, operator
// as changed in PR #76): a linear layer, the subtraction of each row's maximum, and a GELU.
//
// Operator  v = x @ weight + bias;  out = gelu(v - max_j v[:, j])  (keepdims max, per row),
//           gelu(u) = 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))) (jax.nn.gelu's default).
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.02
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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "workloads/gemm.h"
#include "workloads/jnp_bf16.h"
#include "workloads/linear_layer.h"
#include "workloads/matmul_ops.h"
#include "workloads/ops.h"
#include "workloads/row_reductions.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

constexpr linear::WeightLayout kLayout = linear::WeightLayout::kInOut;
constexpr std::int64_t kMaxDim = 1;  // config_full.max_dim: the max runs over the features

linear::Shape shape_of(Size size) {
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
  problem.config = {
      {"batch_size", m}, {"in_features", k}, {"out_features", n}, {"max_dim", kMaxDim}};
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

std::optional<linear::Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                           const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1) return std::nullopt;
  const auto shape = linear::shape_of(in[0], in[1], kLayout, &in[2]);
  if (!shape || !ops::is_float_output(out[0], {shape->m, shape->n})) return std::nullopt;
  return shape;
}

int reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
              kb_tensor* out, std::int32_t num_outputs) {
  const auto shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape || out[0].dtype != KB_F32) return 1;
  const auto [m, k, n] = *shape;
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
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const auto shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const auto [m, k, n] = *shape;
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::ScratchMatrix v(KB_F32, m, n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false, v.out(),
            {.bias = bias.data()});
  const auto len = static_cast<std::size_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const auto* row = static_cast<const float*>(v.row(i));
    const float max = row_reductions::max(row, len);
    if (out[0].dtype == KB_BF16)
      row_reductions::gelu_tanh_shifted(row, max, static_cast<bf16_t*>(out[0].data) + i * n, len);
    else
      row_reductions::gelu_tanh_shifted(row, max, static_cast<float*>(out[0].data) + i * n, len);
  }
  return 0;
}

// The JAX program on bf16 tensors: x @ weight (bf16), + bias (bf16), the row max, v - max (bf16),
// then jax.nn.gelu in bf16 ops.
int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  const auto shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const auto [m, k, n] = *shape;
  const std::vector<float> v = linear::bf16_program(in[0], in[1], kLayout, &in[2]);
  for (std::int64_t i = 0; i < m; ++i) {
    const float* row = v.data() + i * n;
    const float max = *std::max_element(row, row + n);
    for (std::int64_t j = 0; j < n; ++j)
      linear::store(out[0], i * n + j, jnp_bf16::gelu_tanh(round_to_bf16(row[j] - max)));
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kGemmMaxSubtractGelu42k;
const Workload kGemmMaxSubtractGelu42k = {
    .id = "42k",
    .name = "42k_Gemm_Max_Subtract_GELU",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem 80_Gemm_Max_Subtract_GELU",
    .summary = "gelu(v - rowmax(v)), v = x @ weight + bias: bf16 (M,K) x (K,N) GEMM -> (M,N)",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    // atol 3e-2 and rel-L2 2.5e-2: see the header's Tolerance note.
    .tolerance = {.atol = 3e-2, .rtol = 1e-2, .max_rel_l2 = 2.5e-2},
    .bf16_program = bf16_program,
};

}  // namespace kbench
