// 11p_Megablox_GMM: the grouped matmul of a Qwen3-235B-A22B MoE layer (JAX pallas megablox
// reference_gmm): the tokens routed to each expert are a contiguous run of rows, multiplied by
// that expert's weight.
//
// Operator  for each group g with rows [start_g, start_g + group_sizes[g]) of lhs (start_g the
//           sum of the sizes before it): out[rows] = lhs[rows] @ rhs[g], f32 accumulation, cast
//           to lhs's dtype. The original is jittable through lax.scan over the groups with a
//           dynamic_slice of static size max_expert_size and a row mask, so a group contributes at
//           most its first max_expert_size rows; rows no group covers are zero.
// Inputs    lhs          bf16 (M, K)     normal        M = seq_len * num_experts_per_tok
//           rhs          bf16 (G, K, N)  normal*0.02   G = num_experts, K = emb_dim,
//                                                      N = moe_mlp_dim
//           group_sizes  i32  (G)        sizes summing to M (see Deviations)
// Params    max_expert_size  the static slice height (a Python int in the original)
// Output    out          bf16 (M, N)
// FLOPs     2*M*K*N; 412,316,860,416 at full size (M=32768, K=4096, N=1536, G=128).
// Character many compute-bound GEMMs of a few hundred rows each against distinct (K, N) weights:
//           the weights are read once, each used by only its group's rows.
// Deviations
//   - The original's groups are all M/G = 256 rows (its full size, kept here). The cpu and smoke
//     presets draw uneven sizes instead, at least one group empty, so a kernel that assumes equal
//     groups, skips the size input or mishandles an empty group fails: each seed draws the sizes
//     (function of seed and stream) from M/(G-1) per non-empty group moved around by random
//     transfers, every size in [0, max_expert_size], summing to M. max_expert_size is 2 M/G
//     there (rounded up).
//   - lhs is normal (not the old uniform(+-1/(M K)) that underflowed to a no-op, JAXBench 8fa8f3b).
//   - The cpu preset is (M, K, N, G) = (2048, 1024, 384, 16): a mean 128 rows per group,
//     K/N = 2.67 as in the original; its config is 256 tokens x 8 experts per token, smoke's 61 x 1
//     (M = 61 is prime).
//   - The original's dynamic_slice clamps a window starting within max_expert_size rows of the end
//     of lhs, which the uneven sizes reach (the last non-empty group shorter than max_expert_size)
//     and its uniform sizes never do; kbench computes the grouped matmul there, the original
//     shifted rows (docs/workloads.md, "The originals on kbench's inputs").
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
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

struct GmmShape {
  std::int64_t m, k, n, groups, max_expert_size;
  std::int64_t top_k;  // num_experts_per_tok: m = seq_len * top_k tokens routed
};

constexpr GmmShape kSmoke = {61, 37, 29, 5, 25, 1};  // no extent a multiple of 8 or 16
constexpr GmmShape kCpu = {2048, 1024, 384, 16, 256, 8};
constexpr GmmShape kFull = {32768, 4096, 1536, 128, 256, 8};

constexpr Presets<GmmShape> kPresets = {
    .smoke = kSmoke,
    .cpu = kCpu,
    .full = kFull,
};

// SplitMix64: the group-size draws, a function of (seed, stream, counter) only.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uneven sizes summing to `shape.m`, each in [0, max_expert_size], one group empty: an even split
// over the other groups, then 2G random transfers between them that respect both bounds.
void fill_uneven_sizes(const GmmShape& shape, std::uint64_t seed, std::uint32_t stream,
                       kb_tensor& t) {
  const std::int64_t groups = shape.groups;
  auto* sizes = static_cast<std::int32_t*>(t.data);
  std::uint64_t state = mix(seed ^ (static_cast<std::uint64_t>(stream) << 32) ^ 0x11b0ull);
  auto draw = [&state](std::uint64_t bound) {
    state = mix(state);
    return bound == 0 ? 0 : state % bound;
  };
  const auto empty = static_cast<std::int64_t>(draw(static_cast<std::uint64_t>(groups)));
  const std::int64_t filled = groups - 1;
  for (std::int64_t g = 0, slot = 0; g < groups; ++g) {
    if (g == empty) {
      sizes[g] = 0;
      continue;
    }
    sizes[g] = static_cast<std::int32_t>(shape.m / filled + (slot < shape.m % filled ? 1 : 0));
    ++slot;
  }
  for (std::int64_t step = 0; step < 2 * groups; ++step) {
    const auto from = static_cast<std::int64_t>(draw(static_cast<std::uint64_t>(groups)));
    const auto to = static_cast<std::int64_t>(draw(static_cast<std::uint64_t>(groups)));
    if (from == to || from == empty || to == empty) continue;
    const std::int64_t room =
        std::min<std::int64_t>(sizes[from], shape.max_expert_size - sizes[to]);
    const auto moved = static_cast<std::int32_t>(draw(static_cast<std::uint64_t>(room + 1)));
    sizes[from] -= moved;
    sizes[to] += moved;
  }
}

void fill_smoke_sizes(std::uint64_t seed, std::uint32_t stream, kb_tensor& t) {
  fill_uneven_sizes(kSmoke, seed, stream, t);
}
void fill_cpu_sizes(std::uint64_t seed, std::uint32_t stream, kb_tensor& t) {
  fill_uneven_sizes(kCpu, seed, stream, t);
}
// The original's sizes: every group M/G rows.
void fill_full_sizes(std::uint64_t /*seed*/, std::uint32_t /*stream*/, kb_tensor& t) {
  auto* sizes = static_cast<std::int32_t*>(t.data);
  for (std::int64_t g = 0; g < kFull.groups; ++g)
    sizes[g] = static_cast<std::int32_t>(kFull.m / kFull.groups);
}

Problem make_problem(Size size) {
  const GmmShape shape = kPresets.at(size);
  const auto [m, k, n, groups, max_expert_size, top_k] = shape;
  const InitRule::CustomFill fill = size == Size::kSmoke ? fill_smoke_sizes
                                    : size == Size::kCpu ? fill_cpu_sizes
                                                         : fill_full_sizes;
  Problem problem;
  problem.config = {{"num_experts", groups},
                    {"num_experts_per_tok", top_k},
                    {"emb_dim", k},
                    {"moe_mlp_dim", n},
                    {"seq_len", m / top_k}};
  problem.params = {{"max_expert_size", static_cast<double>(max_expert_size)}};
  problem.inputs = {
      {{"lhs", KB_BF16, {m, k}}, InitRule::normal(1.0)},
      {{"rhs", KB_BF16, {groups, k, n}}, InitRule::normal(0.02)},
      {{"group_sizes", KB_I32, {groups}}, InitRule::structured(fill)},
  };
  problem.outputs = {{"out", KB_BF16, {m, n}}};
  problem.flops = gemm_flops(m, k, n);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// One group's rows of lhs that the original multiplies: [start, start + rows).
struct GroupRows {
  std::int64_t start, rows;
};

// The row runs of a call whose tensors match the signature above (any float output dtype), or
// nullopt (also for negative sizes, sizes summing past M, or a max_expert_size below zero).
std::optional<std::vector<GroupRows>> groups_of_call(const kb_config* cfg, const kb_tensor* in,
                                                     std::int32_t num_inputs, const kb_tensor* out,
                                                     std::int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1 || in[0].rank != 2 || in[1].rank != 3)
    return std::nullopt;
  const std::int64_t m = in[0].shape[0], k = in[0].shape[1];
  const std::int64_t groups = in[1].shape[0], n = in[1].shape[2];
  if (!ops::matches(in[0], KB_BF16, {m, k}) || !ops::matches(in[1], KB_BF16, {groups, k, n}) ||
      !ops::matches(in[2], KB_I32, {groups}) || !ops::is_float_output(out[0], {m, n})) {
    return std::nullopt;
  }
  const double max_expert_size = kb_param_or(cfg, "max_expert_size", -1.0);
  if (max_expert_size < 0) return std::nullopt;
  const auto* sizes = static_cast<const std::int32_t*>(in[2].data);
  std::vector<GroupRows> runs;
  std::int64_t start = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    if (sizes[g] < 0 || start + sizes[g] > m) return std::nullopt;
    runs.push_back(
        {start, std::min<std::int64_t>(sizes[g], static_cast<std::int64_t>(max_expert_size))});
    start += sizes[g];
  }
  return runs;
}

int reference(const std::vector<GroupRows>& runs, const kb_tensor* in, kb_tensor* out) {
  const std::int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[2];
  const auto* lhs = static_cast<const bf16_t*>(in[0].data);
  const auto* rhs = static_cast<const bf16_t*>(in[1].data);
  auto* y = static_cast<float*>(out[0].data);
  std::fill(y, y + m * n, 0.0f);  // rows no group covers
  for (std::size_t g = 0; g < runs.size(); ++g)
    matmul::reference_product(lhs + runs[g].start * k, rhs + static_cast<std::int64_t>(g) * k * n,
                              runs[g].rows, k, n, y + runs[g].start * n);
  return 0;
}

// One library GEMM per non-empty group on its own rows (no padding to max_expert_size, whose
// masked rows the original computes and discards), each rounding its f32 product once into the
// output; rows no group covers are zeroed. The groups' GEMMs (a hundred-odd rows each at the cpu
// size) are spread over the threads, one each, as a grouped-GEMM op does. It is also the bf16
// program: the original's dots accumulate in f32 (preferred_element_type) and each result is cast
// to bf16 once, which is exactly this writing bf16.
int baseline(const std::vector<GroupRows>& runs, const kb_tensor* in, kb_tensor* out) {
  const std::int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[2];
  const std::int64_t out_size = out[0].dtype == KB_F32 ? 4 : 2;
  auto* y = static_cast<char*>(out[0].data);
  std::int64_t covered_to = 0;  // rows before this are written or zeroed
  auto zero_rows = [&](std::int64_t from, std::int64_t to) {
    if (to > from) std::fill(y + from * n * out_size, y + to * n * out_size, char{0});
  };
  std::vector<std::size_t> computed;  // the non-empty groups
  std::vector<double> rows_of;
  for (std::size_t g = 0; g < runs.size(); ++g) {
    const auto [start, rows] = runs[g];
    zero_rows(covered_to, start);
    if (rows > 0) {
      computed.push_back(g);
      rows_of.push_back(static_cast<double>(rows));
    }
    covered_to = std::max(covered_to, start + rows);
  }
  zero_rows(covered_to, m);
  ops::spread_library_calls(rows_of, [&](std::size_t i) {
    const std::size_t g = computed[i];
    matmul::group_gemm(in, out[0], static_cast<std::int64_t>(g), runs[g].start, runs[g].rows, k, n);
  });
  return 0;
}

// The baseline is the original's arithmetic too (bf16 operands, f32 accumulation, one rounding
// of each output), so it serves as the bf16 program.
using Programs = CheckedPrograms<groups_of_call, reference, baseline, baseline>;

}  // namespace

const Workload kMegabloxGmm11p = with_programs<Programs>({
    .name = "11p_Megablox_GMM",
    .model = "Qwen3-235B-A22B MoE dims (JAX pallas ops reference_gmm)",
    .summary = "grouped matmul: lhs row runs of group_sizes rows @ rhs[g], bf16 (M,K)x(G,K,N)",
    .problem = make_problem,
    .scaffold = scaffolds::k11p_Megablox_GMM,
});

}  // namespace kbench
