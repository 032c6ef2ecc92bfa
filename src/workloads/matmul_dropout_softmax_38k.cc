// 38k_Matmul_Dropout_Softmax: KernelBench level 2 problem 66 (PyTorch, translated to JAX): a linear
// layer, dropout (skipped: inference), softmax over the features.
//
// Operator  out = softmax(x @ weight.T + bias, axis=1); dropout(p=0.2) is the identity at
//           inference, as in the JAX translation.
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (N, K)  normal*0.02    N = out_features (nn.Linear's (out, in) layout)
//           bias    bf16 (N)     normal*0.02
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
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "workloads/gemm.h"
#include "workloads/jnp_bf16.h"
#include "workloads/matmul_ops.h"
#include "workloads/norm_rows.h"
#include "workloads/ops.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

// config_full.dropout_p: the original skips dropout (inference), so the value is unused.
constexpr double kDropoutP = 0.2;

struct Shape {
  std::int64_t m, k, n;  // batch_size, in_features, out_features
};

Shape shape_of(Size size) {
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
      {"batch_size", m}, {"in_features", k}, {"out_features", n}, {"dropout_p", kDropoutP}};
  problem.inputs = {
      {{"x", KB_BF16, {m, k}}, InitRule::uniform(0.0, 1.0)},
      {{"weight", KB_BF16, {n, k}}, InitRule::normal(0.02)},
      {{"bias", KB_BF16, {n}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {m, n}}};
  problem.flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype), or
// nullopt.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1 || in[0].rank != 2 || in[1].rank != 2) {
    return std::nullopt;
  }
  const Shape shape{in[0].shape[0], in[0].shape[1], in[1].shape[0]};
  const auto [m, k, n] = shape;
  if (!ops::matches(in[0], KB_BF16, {m, k}) || !ops::matches(in[1], KB_BF16, {n, k}) ||
      !ops::matches(in[2], KB_BF16, {n}) || !ops::is_float_output(out[0], {m, n})) {
    return std::nullopt;
  }
  return shape;
}

int reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
              kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape || out[0].dtype != KB_F32) return 1;
  const auto [m, k, n] = *shape;
  const auto* x = static_cast<const bf16_t*>(in[0].data);
  const auto* weight = static_cast<const bf16_t*>(in[1].data);
  const auto* bias = static_cast<const bf16_t*>(in[2].data);
  auto* y = static_cast<float*>(out[0].data);
  std::vector<double> logits(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    double max_logit = -INFINITY;
    for (std::int64_t j = 0; j < n; ++j) {
      double dot = bf16_to_f32(bias[j]);
      for (std::int64_t p = 0; p < k; ++p)
        dot += static_cast<double>(bf16_to_f32(x[i * k + p])) * bf16_to_f32(weight[j * k + p]);
      logits[j] = dot;
      max_logit = std::max(max_logit, dot);
    }
    double total = 0;
    for (double& logit : logits) total += (logit = std::exp(logit - max_logit));
    for (std::int64_t j = 0; j < n; ++j) y[i * n + j] = static_cast<float>(logits[j] / total);
  }
  return 0;
}

// What a fusing compiler emits: one GEMM with the bias fused into its epilogue, into f32 logits,
// then one softmax pass per row while the row is in cache, storing the output once (bf16 in the
// timed run, f32 in the oracle).
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const auto [m, k, n] = *shape;
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::ScratchMatrix logits(KB_F32, m, n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/true, logits.out(),
            {.bias = bias.data()});
  const auto cols = static_cast<std::size_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    auto* row = static_cast<float*>(logits.row(i));
    norm_rows::softmax(row, cols);
    norm_rows::store(row, cols, out[0], static_cast<std::size_t>(i) * cols);
  }
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result, the bias add rounded, then
// jax.nn.softmax op by op in bf16.
int bf16_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                 kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape || out[0].dtype != KB_BF16) return 1;
  const auto [m, k, n] = *shape;
  ops::ScratchMatrix product(KB_BF16, m, n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/true, product.out());
  const auto* bias = static_cast<const bf16_t*>(in[2].data);
  const auto cols = static_cast<std::size_t>(n);
  std::vector<float> row(cols);
  for (std::int64_t i = 0; i < m; ++i) {
    const auto* y = static_cast<const bf16_t*>(product.row(i));
    for (std::size_t j = 0; j < cols; ++j)
      row[j] = jnp_bf16::r(bf16_to_f32(y[j]) + bf16_to_f32(bias[j]));
    jnp_bf16::softmax(row.data(), cols);
    norm_rows::store(row.data(), cols, out[0], static_cast<std::size_t>(i) * cols);
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kMatmulDropoutSoftmax38k;
const Workload kMatmulDropoutSoftmax38k = {
    .id = "38k",
    .name = "38k_Matmul_Dropout_Softmax",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem 66_Matmul_Dropout_Softmax",
    .summary = "softmax(x @ weight.T + bias) over features (dropout is the identity at inference)",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    .tolerance = Tolerance{},  // JAXBench's allclose(atol=1e-2, rtol=1e-2), plus rel-L2 <= 1e-2
    .math = MathClass::kBf16Matmul,
    .bf16_program = bf16_program,
};

}  // namespace kbench
