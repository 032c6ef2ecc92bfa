// 40k_Gemm_GroupNorm_Min_BiasAdd: KernelBench level 2 problem 75 (PyTorch, translated to JAX): a
// linear layer, group norm, the minimum over the features, and a bias add that broadcasts the
// per-row minima against a per-feature bias.
//
// Operator  y = x @ weight.T + linear_bias;
//           g = GroupNorm(y) over G groups of N/G consecutive features (biased variance, eps 1e-5)
//               * gn_weight + gn_bias;
//           row_min[m] = min over j of g[m, j];
//           out[0, c, m, 0] = row_min[m] + bias[0, c, 0, 0]: the (1, 1, M, 1) minima plus the
//           (1, N, 1, 1) bias broadcast to (1, N, M, 1).
// Inputs    x            bf16 (M, K)        uniform[0,1)    M = batch_size, K = in_features
//           weight       bf16 (N, K)        normal*0.02     N = out_features (nn.Linear layout)
//           linear_bias  bf16 (N)           normal*0.1      (spec: normal*0.02; see Deviations)
//           gn_weight    bf16 (N)           normal*0.1 + 1  (spec: ones; see Deviations)
//           gn_bias      bf16 (N)           normal*0.3      (spec: zeros; see Deviations)
//           bias         bf16 (1, N, 1, 1)  normal*0.25     (spec: normal*0.02; see Deviations)
// Params    num_groups = G (512 at full size: groups of 16)
// Output    out          bf16 (1, N, M, 1)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size (M=4096, K=8192,
//           N=8192).
// Character compute-bound GEMM reduced to one value per row by a group norm and a min, then an
//           output as large as the GEMM's written from M + N values.
// Deviations
//   - The cpu preset is (M, K, N) = (768, 1536, 1536) with groups of 16 (G = 96): K = N = 2 M and
//     the group size of the original.
//   - num_groups is passed as the kb_config parameter "num_groups", since it changes with size.
//   - gn_weight and gn_bias are ones and zeros in the spec, which makes the affine step the
//     identity: a kernel that ignored both would pass. They are drawn near those values instead
//     (1 + 0.1 normal, 0.3 normal), which moves each row's minimum by ~0.4, so the affine step
//     must be computed. A row's minimum takes gn_bias at one feature only, and with 0.1 normal an
//     output computed without gn_bias (at 0) came to 0.70 of the bound at the worst of 10 smoke
//     seeds; with 0.3 normal, 4.2 (smoke) and 4.8 (cpu).
//   - linear_bias is normal*0.1, not normal*0.02: the group norm subtracts each group's mean of
//     it, and with sd 0.02 an output computed without it (at 0) stayed inside the rule at cpu
//     size (0.81 of the bound at the worst of 2 seeds); now 5.9 (smoke) and 3.4 (cpu). 29k and
//     45k draw their bias and gn_bias alike (gemm_rows::group_norm_problem).
//   - Tolerance (atol, rtol, rel-L2) = (0.01, 0.05, 0.02), not JAXBench's (0.01, 0.01, 0.01): the
//     original rounds to bf16 after the matmul, the bias add, the group statistics, the
//     normalization and the affine step, then holds the minimum (~-3, where bf16's step is 1/64)
//     and the broadcast sum in bf16. That program's worst element needs rtol 0.02 on 20 smoke and
//     3 cpu seeds; the bound is 2.5 times that (the tolerance's note says why). With linear_bias
//     and gn_bias drawn as now, it uses 0.64 of the bound at the worst of 20,000 smoke seeds and
//     0.41 of 30 cpu seeds.
//   - bias is normal*0.25, not normal*0.02. The output varies along its channel axis only through
//     bias, and with sd 0.02 an output whose channels are permuted (a kernel indexing bias wrongly)
//     stays within the bound of ~0.13 at values of ~-3; at sd 0.25 neighbouring channels differ by
//     ~0.35 and such an output fails, as does one that ignores bias.
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
#include "workloads/kit/gemm_rows.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using gemm_rows::at;
using gemm_rows::WeightLayout;
using Shape = gemm_rows::GroupedShape;

constexpr Presets<Shape> kPresets = {
    .smoke = {29, 53, 55, 11},  // groups of 5: no extent a multiple of 8 or 16
    .cpu = {768, 1536, 1536, 96},
    .full = {4096, 8192, 8192, 512},
};

Problem make_problem(Size size) {
  const Shape shape = kPresets.at(size);
  const auto [m, k, n, num_groups] = shape;
  Problem problem =
      gemm_rows::group_norm_problem(shape, WeightLayout::kOutIn, "weight", "linear_bias");
  problem.inputs.push_back({{"bias", KB_BF16, {1, n, 1, 1}}, InitRule::normal(0.25)});
  problem.outputs = {{"out", KB_BF16, {1, n, m, 1}}};
  gemm_rows::finish_problem(problem, {m, k, n});
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype) and
// whose num_groups divides N, or nullopt.
std::optional<Shape> shape_of_call(const kb_config* cfg, const kb_tensor* in,
                                   std::int32_t num_inputs, const kb_tensor* out,
                                   std::int32_t num_outputs) {
  const std::optional<gemm_rows::Shape> shape =
      gemm_rows::leading_inputs(in, num_inputs, num_outputs, 6, WeightLayout::kOutIn, 3);
  if (!shape || !ops::matches(in[5], KB_BF16, {1, shape->n, 1, 1}) ||
      !ops::is_float_output(out[0], {1, shape->n, shape->m, 1})) {
    return std::nullopt;
  }
  return gemm_rows::with_groups(cfg, shape);
}

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  std::vector<double> y(static_cast<std::size_t>(n));
  std::vector<double> row_min(static_cast<std::size_t>(m), INFINITY);
  for (std::int64_t i = 0; i < m; ++i) {
    gemm_rows::reference_row(in[0], in[1], WeightLayout::kOutIn, &in[2], {m, k, n}, i, y.data());
    gemm_rows::group_norm_row(
        y.data(), n, n / num_groups, gemm_rows::kGroupNormEps, in[3], in[4],
        [&](std::int64_t, double normed) { row_min[i] = std::min(row_min[i], normed); });
  }
  auto* result = static_cast<float*>(out[0].data);
  for (std::int64_t c = 0; c < n; ++c)
    for (std::int64_t i = 0; i < m; ++i)
      result[c * m + i] = static_cast<float>(row_min[i] + at(in[5], c));
  return 0;
}

// What a fusing compiler emits: one GEMM with the linear bias fused into its epilogue, into f32
// rows; one pass per row while it is in cache for the group norm and its minimum; then the
// broadcast add, written once (bf16 in the timed run, f32 in the oracle) one output row
// (one feature c, all M minima) at a time.
int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  const ops::F32Buffer linear_bias = ops::load_f32(in[2]);
  const gemm_rows::RowGroupNorm group_norm(shape, in);
  const ops::F32Buffer bias = ops::load_f32(in[5]);
  ops::ScratchMatrix y =
      gemm_rows::gemm_f32(in, {m, k, n}, WeightLayout::kOutIn, {.bias = linear_bias.data()});
  const auto cols = static_cast<std::size_t>(n);
  const auto rows = static_cast<std::size_t>(m);
  std::vector<float> row_min(rows);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    auto* row = static_cast<float*>(y.row(i));
    group_norm(row);
    row_min[i] = ops::min_value(row, cols);
  }
#pragma omp parallel
  {
    std::vector<float> line(rows);
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < n; ++c) {
      const float b = bias.data()[c];
      for (std::size_t i = 0; i < rows; ++i) line[i] = row_min[i] + b;
      ops::store_row(line.data(), rows, out[0], static_cast<std::size_t>(c) * rows);
    }
  }
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result, then the bias add and the group norm op
// by op, each rounded to bf16; the minimum (exact); the broadcast add, rounded.
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  ops::ScratchMatrix product = gemm_rows::gemm_bf16(in, {m, k, n}, WeightLayout::kOutIn);
  const ops::F32Buffer linear_bias = ops::load_f32(in[2]);
  const gemm_rows::RowGroupNorm group_norm(shape, in);
  const ops::F32Buffer bias = ops::load_f32(in[5]);
  using ops::jnp::r;
  const auto cols = static_cast<std::size_t>(n);
  const auto rows = static_cast<std::size_t>(m);
  std::vector<float> row(cols), row_min(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto* yi = static_cast<const bf16_t*>(product.row(static_cast<std::int64_t>(i)));
    for (std::size_t j = 0; j < cols; ++j) row[j] = r(bf16_to_f32(yi[j]) + linear_bias.data()[j]);
    group_norm.bf16(row.data());
    row_min[i] = *std::min_element(row.begin(), row.end());
  }
  std::vector<float> line(rows);
  for (std::size_t c = 0; c < cols; ++c) {
    for (std::size_t i = 0; i < rows; ++i) line[i] = r(row_min[i] + bias.data()[c]);
    ops::store_row(line.data(), rows, out[0], c * rows);
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemmGroupNormMinBiasAdd40k = with_programs<Programs>({
    .name = "40k_Gemm_GroupNorm_Min_BiasAdd",
    .kernelbench_problem = 75,
    .summary =
        "min over features of groupnorm(x @ weight.T + b), plus a per-feature bias: (1,N,M,1)",
    .problem = make_problem,
    // The bf16 program rounds ~10 times before the minimum and once after (see the header), and a
    // row minimum of ~-3 sits where bf16's step is 1/64: its worst element over 20 smoke and 3 cpu
    // seeds needs rtol 0.02 at atol 0, its rel-L2 reaches 0.0055. Over 20,000 smoke seeds rtol 0.04
    // left the worst at 0.96 of the bound (0.072 off at |out| 1.6); at 0.05 it uses 0.79 (30 cpu
    // seeds: 0.41). Oracle + 5% noise (rel-L2 0.05) stays 2.5x over the rel-L2 bound.
    .tolerance = {.atol = 1e-2, .rtol = 5e-2, .max_rel_l2 = 2e-2},
    .scaffold = scaffolds::k40k_Gemm_GroupNorm_Min_BiasAdd,
});

}  // namespace kbench
