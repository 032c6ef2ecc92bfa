// 45k_Gemm_GroupNorm_Swish_Multiply_Swish: KernelBench level 2 problem 88 (PyTorch, translated to
// JAX): a linear layer, group norm, swish, a per-feature multiply, swish.
//
// Operator  y = x @ gemm_weight.T + gemm_bias;
//           g = GroupNorm(y) over G groups of N/G consecutive features (biased variance, eps 1e-5)
//               * gn_weight + gn_bias;
//           out = swish(swish(g) * multiply_weight), swish(v) = v * sigmoid(v).
// Inputs    x                bf16 (M, K)  uniform[0,1)     M = batch_size, K = in_features
//           gemm_weight      bf16 (N, K)  normal*0.02      N = out_features (nn.Linear layout)
//           gemm_bias        bf16 (N)     normal*0.1       (spec: normal*0.02; see Deviations)
//           gn_weight        bf16 (N)     normal*0.1 + 1   (spec: ones; see Deviations)
//           gn_bias          bf16 (N)     normal*0.3       (spec: zeros; see Deviations)
//           multiply_weight  bf16 (N)     normal
// Params    num_groups = G (256 at full size: groups of 32)
// Output    out              bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size (M=4096, K=8192,
//           N=8192).
// Character compute-bound GEMM; the group norm needs all 32 features of a group, so it runs as a
//           pass over each output row while the row is in cache.
// Deviations
//   - The cpu preset is (M, K, N) = (768, 1536, 1536) with groups of 32 (G = 48): K = N = 2 M and
//     the group size of the original.
//   - num_groups is passed as the kb_config parameter "num_groups", since it changes with size.
//   - gn_weight and gn_bias are ones and zeros in the spec, which makes the affine step the
//     identity: a kernel that ignored both would pass. They are drawn near those values instead
//     (1 + 0.1 normal, 0.3 normal), so the affine step changes the output by ~10% and must be
//     computed. gemm_bias is normal*0.1, not normal*0.02. The three group-norm GEMMs (29k, 40k,
//     45k) draw these inputs alike (gemm_rows::group_norm_problem), and 40k needed the larger
//     scales for the rule to notice a kernel that drops them (its Deviations).
//   - Tolerance (atol, rtol, rel-L2) = (0.03, 0.08, 0.02), not JAXBench's (0.01, 0.01, 0.01): the
//     original rounds to bf16 after the matmul, the bias add, the group statistics, the
//     normalization, the affine step and each op of swish-multiply-swish (~13 roundings), and the
//     unscaled multiply_weight lifts outputs to ~6. Over 20,000 smoke seeds that program's worst
//     elements were outputs near zero up to 0.018 off (smoke's groups of 7 carry coarse
//     statistics): atol 0.01 failed 6 seeds, 1.41 of the bound at worst; at 0.03 the worst uses
//     0.62 of it (30 cpu seeds: 0.37); with gemm_bias and gn_bias drawn as now, 0.62 and 0.42.
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
    .smoke = {29, 53, 49, 7},  // groups of 7: no extent a multiple of 8 or 16
    .cpu = {768, 1536, 1536, 48},
    .full = {4096, 8192, 8192, 256},
};

Problem make_problem(Size size) {
  const Shape shape = kPresets.at(size);
  const auto [m, k, n, num_groups] = shape;
  Problem problem =
      gemm_rows::group_norm_problem(shape, WeightLayout::kOutIn, "gemm_weight", "gemm_bias");
  problem.inputs.push_back({{"multiply_weight", KB_BF16, {n}}, InitRule::normal()});
  gemm_rows::finish_row_problem(problem, {m, k, n});
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype) and
// whose num_groups divides N, or nullopt.
constexpr auto shape_of_call = gemm_rows::grouped_call<WeightLayout::kOutIn, 4>;

double swish(double v) {
  return v / (1.0 + std::exp(-v));
}

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  auto* result = static_cast<float*>(out[0].data);
  std::vector<double> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    gemm_rows::reference_row(in[0], in[1], WeightLayout::kOutIn, &in[2], {m, k, n}, i, y.data());
    gemm_rows::group_norm_row(y.data(), n, n / num_groups, gemm_rows::kGroupNormEps, in[3], in[4],
                              [&](std::int64_t j, double normed) {
                                result[i * n + j] =
                                    static_cast<float>(swish(swish(normed) * at(in[5], j)));
                              });
  }
  return 0;
}

// What a fusing compiler emits: one GEMM with the bias fused into its epilogue, into f32 rows, then
// one pass per row while it is in cache: the group statistics and normalization, then
// swish-multiply-swish, storing the output once (bf16 in the timed run, f32 in the oracle).
int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  const ops::F32Buffer gemm_bias = ops::load_f32(in[2]);
  const gemm_rows::RowGroupNorm group_norm(shape, in);
  const ops::F32Buffer multiply_weight = ops::load_f32(in[5]);
  ops::ScratchMatrix y =
      gemm_rows::gemm_f32(in, {m, k, n}, WeightLayout::kOutIn, {.bias = gemm_bias.data()});
  gemm_rows::finish_rows(y, {m, k, n}, out[0], [&](float* row, std::size_t cols) {
    group_norm(row);
    ops::silu_multiply_silu(row, multiply_weight.data(), cols);
  });
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result, then the bias add, the group norm and
// swish-multiply-swish op by op, each rounded to bf16.
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n, num_groups] = shape;
  ops::ScratchMatrix product = gemm_rows::gemm_bf16(in, {m, k, n}, WeightLayout::kOutIn);
  const ops::F32Buffer gemm_bias = ops::load_f32(in[2]);
  const gemm_rows::RowGroupNorm group_norm(shape, in);
  const ops::F32Buffer multiply_weight = ops::load_f32(in[5]);
  using ops::jnp::r;
  gemm_rows::bf16_rows(
      product, {m, k, n}, out[0], [&](const bf16_t* yi, float* row, std::size_t cols) {
        for (std::size_t j = 0; j < cols; ++j) row[j] = r(bf16_to_f32(yi[j]) + gemm_bias.data()[j]);
        group_norm.bf16(row);
        for (std::size_t j = 0; j < cols; ++j)
          row[j] = ops::jnp::swish(r(ops::jnp::swish(row[j]) * multiply_weight.data()[j]));
      });
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemmGroupNormSwishMultiplySwish45k = with_programs<Programs>({
    .name = "45k_Gemm_GroupNorm_Swish_Multiply_Swish",
    .kernelbench_problem = 88,
    .summary = "swish(swish(groupnorm(x @ weight.T + bias)) * multiply_weight), groups of N/G",
    .problem = make_problem,
    // The bf16 program rounds ~13 times between the GEMM and the output (see the header), and the
    // unscaled multiply_weight lifts outputs to ~6 where bf16's step is 1/32; atol covers its
    // worst elements over 20,000 smoke seeds (outputs near zero, up to 0.018 off) at 0.62 of the
    // bound, rtol twice what its large outputs need; oracle + 5% noise (rel-L2 0.05) stays 2.5x
    // over the rel-L2 bound.
    .tolerance = {.atol = 3e-2, .rtol = 8e-2, .max_rel_l2 = 2e-2},
    .scaffold = scaffolds::k45k_Gemm_GroupNorm_Swish_Multiply_Swish,
});

}  // namespace kbench
