// 29k_Matmul_Swish_Sum_GroupNorm: KernelBench level 2 problem 37 (PyTorch, translated to JAX): a
// matmul without bias, swish, a bias add, group norm.
//
// Operator  y = swish(x @ weight) + bias, swish(v) = sigmoid(v) * v;
//           out = GroupNorm(y) over G groups of N/G consecutive features (biased variance,
//                 eps 1e-5) * gn_weight + gn_bias.
// Inputs    x          bf16 (M, K)  uniform[0,1)     M = batch_size, K = in_features
//           weight     bf16 (K, N)  normal*0.02      N = out_features (the translation's x @ W)
//           bias       bf16 (N)     normal*0.02
//           gn_weight  bf16 (N)     normal*0.1 + 1   (spec: ones; see Deviations)
//           gn_bias    bf16 (N)     normal*0.1       (spec: zeros; see Deviations)
// Params    num_groups = G (64 at full size: groups of 64)
// Output    out        bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 274,877,906,944 at full size (M=8192, K=4096,
//           N=4096).
// Character compute-bound GEMM; the swish fuses into its epilogue, the group norm (64 features per
//           group) runs as a pass over each output row while the row is in cache.
// Deviations
//   - The cpu preset is (M, K, N) = (2048, 1024, 1024) with groups of 64 (G = 16): M = 2 K = 2 N
//     and the group size of the original.
//   - num_groups is passed as the kb_config parameter "num_groups", since it changes with size.
//   - gn_weight and gn_bias are ones and zeros in the spec, which makes the affine step the
//     identity: a kernel that ignored both would pass. They are drawn near those values instead
//     (1 + 0.1 normal, 0.1 normal), so the affine step changes the output by ~10% and must be
//     computed.
//   - Tolerance (atol, rtol, rel-L2) = (0.03, 0.04, 0.02), not JAXBench's (0.01, 0.01, 0.01): the
//     original rounds to bf16 after the matmul, the sigmoid, the product, the bias add, the group
//     statistics, the subtraction, the division and the affine step, and (v - mean) / sd turns
//     each rounding of v (|v| up to ~3 sd) into an absolute error of the normalized output. That
//     program's worst element needs (0.015, 0.02) on 20 smoke and 3 cpu seeds; the bound doubles
//     it.
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

constexpr double kEps = 1e-5;  // the GroupNorm's epsilon in the original

struct Shape {
  std::int64_t m, k, n, num_groups;  // batch_size, in_features, out_features, num_groups
};

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {29, 53, 63, 7};  // groups of 9: no extent a multiple of 8 or 16
    case Size::kCpu:
      return {2048, 1024, 1024, 16};
    case Size::kFull:
      break;
  }
  return {8192, 4096, 4096, 64};
}

Problem make_problem(Size size) {
  const auto [m, k, n, num_groups] = shape_of(size);
  Problem problem;
  problem.config = {
      {"batch_size", m}, {"in_features", k}, {"out_features", n}, {"num_groups", num_groups}};
  problem.params = {{"num_groups", static_cast<double>(num_groups)}};
  problem.inputs = {
      {{"x", KB_BF16, {m, k}}, InitRule::uniform(0.0, 1.0)},
      {{"weight", KB_BF16, {k, n}}, InitRule::normal(0.02)},
      {{"bias", KB_BF16, {n}}, InitRule::normal(0.02)},
      {{"gn_weight", KB_BF16, {n}}, InitRule::normal(0.1, 1.0)},
      {{"gn_bias", KB_BF16, {n}}, InitRule::normal(0.1)},
  };
  problem.outputs = {{"out", KB_BF16, {m, n}}};
  problem.flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype) and
// whose num_groups divides N, or nullopt.
std::optional<Shape> shape_of_call(const kb_config* cfg, const kb_tensor* in,
                                   std::int32_t num_inputs, const kb_tensor* out,
                                   std::int32_t num_outputs) {
  if (num_inputs != 5 || num_outputs != 1 || in[0].rank != 2 || in[1].rank != 2) {
    return std::nullopt;
  }
  const auto num_groups = static_cast<std::int64_t>(kb_param_or(cfg, "num_groups", 0));
  const Shape shape{in[0].shape[0], in[0].shape[1], in[1].shape[1], num_groups};
  const auto [m, k, n, g] = shape;
  if (g <= 0 || n % g != 0) return std::nullopt;
  if (!ops::matches(in[0], KB_BF16, {m, k}) || !ops::matches(in[1], KB_BF16, {k, n})) {
    return std::nullopt;
  }
  for (int i = 2; i < 5; ++i)
    if (!ops::matches(in[i], KB_BF16, {n})) return std::nullopt;
  if (!ops::is_float_output(out[0], {m, n})) return std::nullopt;
  return shape;
}

int reference(const kb_config* cfg, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
              std::int32_t num_outputs) {
  const std::optional<Shape> shape = shape_of_call(cfg, in, num_inputs, out, num_outputs);
  if (!shape || out[0].dtype != KB_F32) return 1;
  const auto [m, k, n, num_groups] = *shape;
  const std::int64_t group_size = n / num_groups;
  const auto* x = static_cast<const bf16_t*>(in[0].data);
  const auto* weight = static_cast<const bf16_t*>(in[1].data);
  const auto param = [&](int input, std::int64_t j) {
    return static_cast<double>(bf16_to_f32(static_cast<const bf16_t*>(in[input].data)[j]));
  };
  auto* result = static_cast<float*>(out[0].data);
  std::vector<double> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    // i-p-j order: weight read along its rows.
    std::fill(y.begin(), y.end(), 0.0);
    for (std::int64_t p = 0; p < k; ++p) {
      const double x_ip = bf16_to_f32(x[i * k + p]);
      for (std::int64_t j = 0; j < n; ++j) y[j] += x_ip * bf16_to_f32(weight[p * n + j]);
    }
    for (std::int64_t j = 0; j < n; ++j) y[j] = y[j] / (1.0 + std::exp(-y[j])) + param(2, j);
    for (std::int64_t g = 0; g < n; g += group_size) {
      double mean = 0, var = 0;
      for (std::int64_t j = g; j < g + group_size; ++j) mean += y[j];
      mean /= static_cast<double>(group_size);
      for (std::int64_t j = g; j < g + group_size; ++j) var += (y[j] - mean) * (y[j] - mean);
      var /= static_cast<double>(group_size);
      for (std::int64_t j = g; j < g + group_size; ++j) {
        const double normed = (y[j] - mean) / std::sqrt(var + kEps) * param(3, j) + param(4, j);
        result[i * n + j] = static_cast<float>(normed);
      }
    }
  }
  return 0;
}

// What a fusing compiler emits: one GEMM with the swish fused into its epilogue, into f32 rows,
// then one pass per row while it is in cache: the bias add, the group statistics and normalization,
// storing the output once (bf16 in the timed run, f32 in the oracle).
int baseline(const kb_config* cfg, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> shape = shape_of_call(cfg, in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const auto [m, k, n, num_groups] = *shape;
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  const ops::F32Buffer gn_weight = ops::load_f32(in[3]);
  const ops::F32Buffer gn_bias = ops::load_f32(in[4]);
  ops::ScratchMatrix y(KB_F32, m, n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false, y.out(),
            {.activation = ops::Activation::kSilu});
  const auto cols = static_cast<std::size_t>(n);
  const auto group_size = static_cast<std::size_t>(n / num_groups);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    auto* row = static_cast<float*>(y.row(i));
    norm_rows::group_norm(row, cols, group_size, static_cast<float>(kEps), bias.data(),
                          gn_weight.data(), gn_bias.data());
    norm_rows::store(row, cols, out[0], static_cast<std::size_t>(i) * cols);
  }
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result, then the swish, the bias add and the
// group norm op by op, each rounded to bf16.
int bf16_program(const kb_config* cfg, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
                 std::int32_t num_outputs) {
  const std::optional<Shape> shape = shape_of_call(cfg, in, num_inputs, out, num_outputs);
  if (!shape || out[0].dtype != KB_BF16) return 1;
  const auto [m, k, n, num_groups] = *shape;
  ops::ScratchMatrix product(KB_BF16, m, n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false, product.out());
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  const ops::F32Buffer gn_weight = ops::load_f32(in[3]);
  const ops::F32Buffer gn_bias = ops::load_f32(in[4]);
  using jnp_bf16::r;
  const auto cols = static_cast<std::size_t>(n);
  std::vector<float> row(cols);
  for (std::int64_t i = 0; i < m; ++i) {
    const auto* yi = static_cast<const bf16_t*>(product.row(i));
    for (std::size_t j = 0; j < cols; ++j)
      row[j] = r(jnp_bf16::swish(bf16_to_f32(yi[j])) + bias.data()[j]);
    jnp_bf16::group_norm(row.data(), cols, cols / static_cast<std::size_t>(num_groups),
                         static_cast<float>(kEps), gn_weight.data(), gn_bias.data());
    norm_rows::store(row.data(), cols, out[0], static_cast<std::size_t>(i) * cols);
  }
  return 0;
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kMatmulSwishSumGroupNorm29k;
const Workload kMatmulSwishSumGroupNorm29k = {
    .id = "29k",
    .name = "29k_Matmul_Swish_Sum_GroupNorm",
    .group = Group::kKernelBenchL2,
    .source_model =
        "KernelBench Level 2 (PyTorch->JAX translation), problem 37_Matmul_Swish_Sum_GroupNorm",
    .summary = "groupnorm(swish(x @ weight) + bias) over groups of N/G features, affine",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    // The bf16 program rounds ~10 times between the GEMM and the output (see the header): its
    // worst element over 20 smoke and 3 cpu seeds needs atol + rtol |oracle| with (0.015, 0.02),
    // its rel-L2 reaches 0.0055. The bound doubles both; oracle + 5% noise (rel-L2 0.05) stays 2.5x
    // over it. The elementwise part is 1.5x that, (0.045, 0.06): over 400 smoke seeds (kbench
    // validate --seeds 200, two base seeds) one element exceeded (0.03, 0.04) by 7%.
    .tolerance = {.atol = 4.5e-2, .rtol = 6e-2, .max_rel_l2 = 2e-2},
    .math = MathClass::kBf16Matmul,
    .bf16_program = bf16_program,
};

}  // namespace kbench
