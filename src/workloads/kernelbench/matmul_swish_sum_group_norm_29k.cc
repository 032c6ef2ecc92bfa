// 29k_Matmul_Swish_Sum_GroupNorm: KernelBench level 2 problem 37 (PyTorch, translated to JAX): a
// matmul without bias, swish, a bias add, group norm.
//
// Operator  y = swish(x @ weight) + bias, swish(v) = sigmoid(v) * v;
//           out = GroupNorm(y) over G groups of N/G consecutive features (biased variance,
//                 eps 1e-5) * gn_weight + gn_bias.
// Inputs    x          bf16 (M, K)  uniform[0,1)     M = batch_size, K = in_features
//           weight     bf16 (K, N)  normal*0.02      N = out_features (the translation's x @ W)
//           bias       bf16 (N)     normal*0.1       (spec: normal*0.02; see Deviations)
//           gn_weight  bf16 (N)     normal*0.1 + 1   (spec: ones; see Deviations)
//           gn_bias    bf16 (N)     normal*0.3       (spec: zeros; see Deviations)
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
//     (1 + 0.1 normal, 0.3 normal), so the affine step changes the output by ~10% and must be
//     computed. bias is normal*0.1, not normal*0.02. The three group-norm GEMMs (29k, 40k, 45k)
//     draw these inputs alike (gemm_rows::group_norm_problem), and 40k needed the larger scales
//     for the rule to notice a kernel that drops them (its Deviations).
//   - Tolerance (atol, rtol, rel-L2) = (0.045, 0.06, 0.02), not JAXBench's (0.01, 0.01, 0.01): the
//     original rounds to bf16 after the matmul, the sigmoid, the product, the bias add, the group
//     statistics, the subtraction, the division and the affine step, and (v - mean) / sd turns
//     each rounding of v (|v| up to ~3 sd) into an absolute error of the normalized output. That
//     program's worst element needs (0.015, 0.02) on 20 smoke and 3 cpu seeds; the bound is three
//     times that (the tolerance's note says why not twice). With bias and gn_bias drawn as now, it
//     uses 0.65 of the bound at the worst of 20,000 smoke seeds and 0.48 of 30 cpu seeds.
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/jnp_bf16.h"
#include "ops/rows.h"
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
    .smoke = {29, 53, 63, 7},  // groups of 9: no extent a multiple of 8 or 16
    .cpu = {2048, 1024, 1024, 16},
    .full = {8192, 4096, 4096, 64},
};

Problem make_problem(Size size) {
  const Shape shape = kPresets.at(size);
  const auto [m, k, n, num_groups] = shape;
  Problem problem = gemm_rows::group_norm_problem(shape, WeightLayout::kInOut, "weight", "bias");
  gemm_rows::finish_row_problem(problem, {m, k, n});
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype) and
// whose num_groups divides N, or nullopt.
constexpr auto shape_of_call = gemm_rows::grouped_call<WeightLayout::kInOut, 3>;

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  auto* result = static_cast<float*>(out[0].data);
  std::vector<double> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    gemm_rows::reference_row(in[0], in[1], WeightLayout::kInOut, nullptr, {m, k, n}, i, y.data());
    for (std::int64_t j = 0; j < n; ++j) y[j] = y[j] / (1.0 + std::exp(-y[j])) + at(in[2], j);
    gemm_rows::group_norm_row(
        y.data(), n, n / num_groups, gemm_rows::kGroupNormEps, in[3], in[4],
        [&](std::int64_t j, double normed) { result[i * n + j] = static_cast<float>(normed); });
  }
  return 0;
}

// What a fusing compiler emits: one GEMM with the swish fused into its epilogue, into f32 rows,
// then one pass per row while it is in cache: the bias add, the group statistics and normalization,
// storing the output once (bf16 in the timed run, f32 in the oracle).
int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  const gemm_rows::RowGroupNorm group_norm(shape, in);
  ops::ScratchMatrix y = gemm_rows::gemm_f32(in, {m, k, n}, WeightLayout::kInOut,
                                             {.activation = ops::Activation::kSilu});
  gemm_rows::finish_rows(y, {m, k, n}, out[0],
                         [&](float* row, std::size_t) { group_norm(row, bias.data()); });
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result, then the swish, the bias add and the
// group norm op by op, each rounded to bf16.
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  ops::ScratchMatrix product = gemm_rows::gemm_bf16(in, {m, k, n}, WeightLayout::kInOut);
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  const gemm_rows::RowGroupNorm group_norm(shape, in);
  using ops::jnp::r;
  gemm_rows::bf16_rows(product, {m, k, n}, out[0],
                       [&](const bf16_t* yi, float* row, std::size_t cols) {
                         for (std::size_t j = 0; j < cols; ++j)
                           row[j] = r(ops::jnp::swish(bf16_to_f32(yi[j])) + bias.data()[j]);
                         group_norm.bf16(row);
                       });
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kMatmulSwishSumGroupNorm29k = with_programs<Programs>({
    .name = "29k_Matmul_Swish_Sum_GroupNorm",
    .kernelbench_problem = 37,
    .summary = "groupnorm(swish(x @ weight) + bias) over groups of N/G features, affine",
    .problem = make_problem,
    // The bf16 program rounds ~10 times between the GEMM and the output (see the header): its
    // worst element over 20 smoke and 3 cpu seeds needs atol + rtol |oracle| with (0.015, 0.02),
    // its rel-L2 reaches 0.0055. The bound doubles both; oracle + 5% noise (rel-L2 0.05) stays 2.5x
    // over it. The elementwise part is 1.5x that, (0.045, 0.06): over 400 smoke seeds (kbench
    // validate --seeds 200, two base seeds) one element exceeded (0.03, 0.04) by 7%.
    .tolerance = {.atol = 4.5e-2, .rtol = 6e-2, .max_rel_l2 = 2e-2},
    .scaffold = scaffolds::k29k_Matmul_Swish_Sum_GroupNorm,
});

}  // namespace kbench
