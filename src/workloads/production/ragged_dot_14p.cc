// 14p_Ragged_Dot: the grouped matmul of a Mixtral-8x7B MoE layer (openxla/tokamax ragged_dot), with
// every group the same size, so it is a batched GEMM.
//
// Operator  out[g] = x[g] @ weights[g] for each group g (einsum gmk,gkn->gmn), f32 accumulation,
//           bf16 result.
// Inputs    x        bf16 (G, Mg, K)  normal        G = num_groups, Mg = M / G rows per group
//           weights  bf16 (G, K, N)   normal*0.02
// Output    out      bf16 (G, Mg, N)
// FLOPs     G*(M//G)*K*N*2; 962,072,674,304 at full size (G=8, M=8192, K=4096, N=14336).
// Character G independent compute-bound GEMMs with a short M (1024 rows) against a wide weight.
// Deviations
//   - The cpu preset is (G, Mg, K, N) = (8, 128, 512, 1792): eight groups, Mg = K/4 and N = 3.5 K
//     as in the original.
//   - The original's docstring mentions group_sizes but it takes none: the groups are equal, as
//     here.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "ops/gemm.h"
#include "ops/spread_calls.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/matmul.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

struct GroupedShape {
  std::int64_t groups, rows, k, n;  // G, M / G, K, N
};

constexpr Presets<GroupedShape> kPresets = {
    .smoke = {3, 13, 37, 29},  // no extent a multiple of 8 or 16: exercises every tile edge
    .cpu = {8, 128, 512, 1792},
    .full = {8, 1024, 4096, 14336},
};

Problem make_problem(Size size) {
  const auto [groups, rows, k, n] = kPresets.at(size);
  Problem problem;
  problem.config = {{"num_groups", groups}, {"M", groups * rows}, {"K", k}, {"N", n}};
  problem.inputs = {
      {{"x", KB_BF16, {groups, rows, k}}, InitRule::normal(1.0)},
      {{"weights", KB_BF16, {groups, k, n}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {groups, rows, n}}};
  problem.flops = static_cast<double>(groups) * static_cast<double>(rows) * static_cast<double>(k) *
                  static_cast<double>(n) * 2.0;
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype), or
// nullopt.
std::optional<GroupedShape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                          const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || in[0].rank != 3 || in[1].rank != 3)
    return std::nullopt;
  const GroupedShape shape{in[0].shape[0], in[0].shape[1], in[0].shape[2], in[1].shape[2]};
  const auto [groups, rows, k, n] = shape;
  if (!ops::matches(in[0], KB_BF16, {groups, rows, k}) ||
      !ops::matches(in[1], KB_BF16, {groups, k, n}) ||
      !ops::is_float_output(out[0], {groups, rows, n})) {
    return std::nullopt;
  }
  return shape;
}

int reference(const GroupedShape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [groups, rows, k, n] = shape;
  const auto* x = static_cast<const bf16_t*>(in[0].data);
  const auto* weights = static_cast<const bf16_t*>(in[1].data);
  auto* y = static_cast<float*>(out[0].data);
  for (std::int64_t g = 0; g < groups; ++g)
    matmul::reference_product(x + g * rows * k, weights + g * k * n, rows, k, n, y + g * rows * n);
  return 0;
}

// One library GEMM per group, each rounding its f32 product once into the output (bf16 timed, f32
// oracle), as XLA lowers the batched einsum; the groups spread over the threads, one each (a
// 128-row GEMM split two ways scaled 1.55x). It is also the bf16 program: the original's bf16
// einsum accumulates in f32 and rounds once to bf16, which is exactly this writing bf16.
int baseline(const GroupedShape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [groups, rows, k, n] = shape;
  ops::spread_library_calls(std::vector<double>(static_cast<std::size_t>(groups), 1.0),
                            [&](std::size_t group) {
                              const auto g = static_cast<std::int64_t>(group);
                              matmul::group_gemm(in, out[0], g, g * rows, rows, k, n);
                            });
  return 0;
}

// The baseline is the original's arithmetic too (bf16 operands, f32 accumulation, one rounding
// of each output), so it serves as the bf16 program.
using Programs = CheckedPrograms<shape_of_call, reference, baseline, baseline>;

}  // namespace

const Workload kRaggedDot14p = with_programs<Programs>({
    .name = "14p_Ragged_Dot",
    .model = "Mixtral-8x7B (openxla/tokamax ragged_dot)",
    .summary =
        "grouped matmul with equal groups: out[g] = x[g] @ weights[g], bf16 (G,Mg,K)x(G,K,N)",
    .problem = make_problem,
    .scaffold = scaffolds::k14p_Ragged_Dot,
});

}  // namespace kbench
