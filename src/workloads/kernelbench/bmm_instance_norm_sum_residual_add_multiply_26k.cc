// 26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply: KernelBench level 2 problem 28 (PyTorch,
// translated to JAX): a linear layer, an instance norm, a residual add and a product.
//
// Operator  v = x @ bmm_weight.T + bmm_bias                                (M, N)
//           u = (v - mean_j v) / sqrt(var_j v + 1e-5) * in_weight + in_bias   (per row, over the
//               N features; see Deviations)
//           out = (u + y) * y
// Inputs    x           bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           y           bf16 (M, N)  uniform[0,1)   N = out_features
//           bmm_weight  bf16 (N, K)  normal*0.02    (nn.Linear layout)
//           bmm_bias    bf16 (N)     normal*0.02
//           in_weight   bf16 (N)     ones
//           in_bias     bf16 (N)     normal*0.1  (spec: normal*0.02; see Deviations)
// Output    out         bf16 (M, N)
// FLOPs     2*M*K*N (derived); 549,755,813,888 at full size (M=4096, K=8192, N=8192).
// Character compute-bound GEMM whose epilogue needs two row statistics (mean, variance) before
//           its elementwise part, plus a second (M, N) input streamed once.
// Tolerance atol 0.15 (rtol and rel-L2 stay 1e-2). The faithful program rounds the normalized value
//           u (|u| up to ~4-5, half an ulp 0.016), u + in_bias, u + y and the product to bf16,
//           each an absolute error independent of the output, and (u + y) * y cancels where
//           u ~ -y. Measured worst |diff|: 0.034 (smoke, 20 seeds), 0.050 (cpu, 3 seeds), 0.073
//           (full, 1 seed: more rows reach larger |u|), which atol 1e-2 fails (rtol would have
//           to be 7% at cpu size). atol 0.15 keeps 2x margin at full size; wrong answers are
//           still rejected by rel-L2 1e-2 (faithful 0.004 at every size, oracle + 5% noise 0.050).
// Deviations
//   - Non-degeneracy (the spec's caveat): the JAX translation applies InstanceNorm2d to v
//     reshaped to (N, C, 1, 1), so each element is normalized over its 1x1 spatial extent:
//     (v - v) / sqrt(0 + eps) = 0, and out = (in_bias + y) * y, independent of x and of the GEMM.
//     The PyTorch original calls instance_norm(v.unsqueeze(1).unsqueeze(1)), a (M, 1, 1, N)
//     tensor whose spatial extent is the N features: each row is normalized over its features.
//     kbench restores that: mean and (biased) variance per row over the N features, eps 1e-5,
//     then the spec's per-feature in_weight and in_bias (PyTorch's InstanceNorm2d defaults to no
//     affine; the translation's per-feature affine is kept, with its ones / normal*0.02 inits).
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - in_bias normal*0.1 instead of normal*0.02: an output computed without it (at 0) came to 1.25
//     (smoke) and 1.6 (cpu) of the rule's bound at its worst over 10 smoke and 2 cpu seeds, too
//     close for the rule to be sure to notice a kernel that drops it; now 6.2 and 7.8 (suite_test,
//     docs/workloads.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr linear::WeightLayout kLayout = linear::WeightLayout::kOutIn;
constexpr float kEps = 1e-5f;

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  const auto [m, k, n] = shape;
  // Not linear::layer_inputs: y comes between x and the layer's renamed weight and bias.
  return linear::problem(shape, linear::layer_config(shape),
                         {
                             {{"x", KB_BF16, {m, k}}, InitRule::uniform(0.0, 1.0)},
                             {{"y", KB_BF16, {m, n}}, InitRule::uniform(0.0, 1.0)},
                             {{"bmm_weight", KB_BF16, {n, k}}, InitRule::normal(0.02)},
                             {{"bmm_bias", KB_BF16, {n}}, InitRule::normal(0.02)},
                             {{"in_weight", KB_BF16, {n}}, InitRule::constant(1.0)},
                             {{"in_bias", KB_BF16, {n}}, InitRule::normal(0.1)},
                         },
                         {m, n});
}

std::optional<linear::Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                           const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 6 || num_outputs != 1) return std::nullopt;
  const auto shape = linear::shape_of(in[0], in[2], kLayout, &in[3]);
  if (!shape || !ops::matches(in[1], KB_BF16, {shape->m, shape->n}) ||
      !ops::matches(in[4], KB_BF16, {shape->n}) || !ops::matches(in[5], KB_BF16, {shape->n}) ||
      !ops::is_float_output(out[0], {shape->m, shape->n}))
    return std::nullopt;
  return shape;
}

int reference(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  const std::vector<double> v = linear::reference(in[0], in[2], kLayout, &in[3]);
  const auto* y = static_cast<const bf16_t*>(in[1].data);
  const auto* gamma = static_cast<const bf16_t*>(in[4].data);
  const auto* beta = static_cast<const bf16_t*>(in[5].data);
  auto* result = static_cast<float*>(out[0].data);
  for (std::int64_t i = 0; i < m; ++i) {
    const double* row = v.data() + i * n;
    double mean = 0;
    for (std::int64_t j = 0; j < n; ++j) mean += row[j];
    mean /= static_cast<double>(n);
    double var = 0;
    for (std::int64_t j = 0; j < n; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(n);
    const double inv_std = 1.0 / std::sqrt(var + kEps);
    for (std::int64_t j = 0; j < n; ++j) {
      const double u = (row[j] - mean) * inv_std * bf16_to_f32(gamma[j]) + bf16_to_f32(beta[j]);
      const double y_ij = bf16_to_f32(y[i * n + j]);
      result[i * n + j] = static_cast<float>((u + y_ij) * y_ij);
    }
  }
  return 0;
}

// Values of the elementwise pass computed in f32 before a bf16 row is rounded: 4 KiB, in L1.
constexpr std::int64_t kChunk = 1024;

// What a fusing compiler emits: the GEMM with bmm_bias fused into its epilogue, into f32, then one
// loop fusion per row: its mean and variance (two passes over the cached row), then the
// normalization, affine, residual add and product, written once in the output dtype.
int baseline(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  const ops::F32Buffer gamma = ops::load_f32(in[4]);
  const ops::F32Buffer beta = ops::load_f32(in[5]);
  ops::ScratchMatrix v = linear::f32_gemm(in[0], in[2], kLayout, &in[3]);
  const auto* y = static_cast<const bf16_t*>(in[1].data);
  const bool bf16_out = out[0].dtype == KB_BF16;
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const auto* row = static_cast<const float*>(v.row(i));
    float total = 0;
#pragma omp simd reduction(+ : total)
    for (std::int64_t j = 0; j < n; ++j) total += row[j];
    const float mean = total / static_cast<float>(n);
    float squares = 0;
#pragma omp simd reduction(+ : squares)
    for (std::int64_t j = 0; j < n; ++j) squares += (row[j] - mean) * (row[j] - mean);
    const float inv_std = 1.0f / std::sqrt(squares / static_cast<float>(n) + kEps);
    alignas(64) float chunk[kChunk];
    for (std::int64_t start = 0; start < n; start += kChunk) {
      const std::int64_t len = std::min(kChunk, n - start);
      float* dst = bf16_out ? chunk : static_cast<float*>(out[0].data) + i * n + start;
      const float* src = row + start;
      const bf16_t* y_row = y + i * n + start;
      const float* g = gamma.data() + start;
      const float* b = beta.data() + start;
#pragma omp simd
      for (std::int64_t j = 0; j < len; ++j) {
        const float y_ij = bf16_to_f32(y_row[j]);
        dst[j] = ((src[j] - mean) * inv_std * g[j] + b[j] + y_ij) * y_ij;
      }
      if (bf16_out)
        convert_f32_to_bf16(chunk, static_cast<bf16_t*>(out[0].data) + i * n + start,
                            static_cast<std::size_t>(len));
    }
  }
  return 0;
}

// The JAX program on bf16 tensors, every elementwise op rounding to bf16: x @ bmm_weight.T, +
// bmm_bias; the row mean and variance as jnp.mean / jnp.var compute them for bf16 (in f32, each
// result rounded to bf16); v - mean, var + eps, sqrt, the division, * in_weight, + in_bias, + y,
// * y.
int bf16_program(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  const std::vector<float> v = linear::bf16_program(in[0], in[2], kLayout, &in[3]);
  const auto* y = static_cast<const bf16_t*>(in[1].data);
  const auto* gamma = static_cast<const bf16_t*>(in[4].data);
  const auto* beta = static_cast<const bf16_t*>(in[5].data);
  for (std::int64_t i = 0; i < m; ++i) {
    const float* row = v.data() + i * n;
    float total = 0;
    for (std::int64_t j = 0; j < n; ++j) total += row[j];
    const float mean_f32 = total / static_cast<float>(n);
    float squares = 0;
    for (std::int64_t j = 0; j < n; ++j) squares += (row[j] - mean_f32) * (row[j] - mean_f32);
    const float mean = round_to_bf16(mean_f32);
    const float var = round_to_bf16(squares / static_cast<float>(n));
    const float std_dev = round_to_bf16(std::sqrt(round_to_bf16(var + kEps)));
    for (std::int64_t j = 0; j < n; ++j) {
      const float normalized = round_to_bf16(round_to_bf16(row[j] - mean) / std_dev);
      const float u =
          round_to_bf16(round_to_bf16(normalized * bf16_to_f32(gamma[j])) + bf16_to_f32(beta[j]));
      const float y_ij = bf16_to_f32(y[i * n + j]);
      linear::store(out[0], i * n + j, round_to_bf16(round_to_bf16(u + y_ij) * y_ij));
    }
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kBmmInstanceNormSumResidualAddMultiply26k = with_programs<Programs>({
    .name = "26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply",
    .kernelbench_problem = 28,
    .summary = "(rownorm(x @ W.T + b) * in_weight + in_bias + y) * y: bf16 GEMM -> (M,N)",
    .problem = make_problem,
    // atol 0.15: see the header's Tolerance note.
    .tolerance = {.atol = 0.15, .rtol = 1e-2, .max_rel_l2 = 1e-2},
    .scaffold = scaffolds::k26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply,
});

}  // namespace kbench
