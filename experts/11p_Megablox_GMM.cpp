// 11p_Megablox_GMM expert: the MoE grouped matmul. Group g owns the rows [start_g, start_g +
// min(group_sizes[g], max_expert_size)) of lhs (start_g the sum of the sizes before it), and
// out[those rows] = bf16(lhs[rows] (bf16) @ rhs[g] (bf16 K x N), f32 sums); rows no group covers
// are zero.
//
// Each non-empty group is one product of the shared BLIS-style GEMM (include/blocked_gemm.h), its
// A a sub-matrix view of lhs (the group's rows, lda = K) and its C the same rows of out: no
// gather, no padding to max_expert_size, and empty groups cost nothing. All groups go to one call,
// so the blocked loops see the whole grouped problem at once:
//   for pc in K step KC:
//     for (group, N block of NC columns, row block of MC rows), split among threads by work:
//       on a new (group, row block): pack its rows of lhs[:, pc..] (bf16 -> f32) into MR-row
//                                    k-major panels (8x8 transposes in ymm registers)
//       stream the row panels past the B block through the MR x NR micro-kernel; on a new
//       (group, N block) the first row panel runs the packing form of the micro-kernel, which
//       reads rhs[g][pc.., its columns] (bf16) itself, widens it, uses it and leaves it packed
//       (f32 NR-column panels, an L2-resident block) for the other row panels, so that waiting
//       on the weights overlaps with FMAs (KB_PACK_IN_KERNEL; AVX-512 only)
// So each weight element is read from memory and widened exactly once per call (it is used only
// by its group's rows, so there is nothing to share across groups), and each group's lhs rows
// are widened once per K block and thread into a private buffer (a group's rows: ~0.5 MiB at the
// cpu size, mostly L2-resident), whatever the number of column blocks (KB_SHARE_A=0).
//
// Threads: the (group, N block, row block) items are cut into contiguous runs of equal work
// (padded rows x columns), so uneven groups balance to within half an item (at the cpu size and
// the defaults: 45 items of up to 256 x 128 for 2 threads); a run keeps its B block packed across
// the row blocks of one (group, N block), and its group's packed lhs rows across the group's N
// blocks. A split by whole groups would leave one thread with the largest groups; a split of N
// alone would have every thread pack every group's rows.
//
// Paths, chosen at the first call (blocked_gemm::select_path):
//   AMX-BF16 (Sapphire Rapids+; cpuid and the kernel's tile-state grant): 8p's tile GEMM
//     (include/blocked_gemm.h) over the groups as a list of products: every group's rows packed
//     into tiles first, then the NC-column panels of all groups split among threads by work;
//   AVX-512F/BW/VL: the MR x NR f32 register tile (default 6x64: 24 zmm accumulators);
//   AVX2+FMA: a 6x16 f32 tile (12 ymm accumulators);
//   scalar: an f32 row accumulator per output row, for x86-64 without AVX2.
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "include/blocked_gemm.h"
#include "kbench/kernel.h"

// Tunables (the tuner parses the "tune:" lines, one parameter per line).
//   MR x NR   the AVX-512 register tile (8x64 has 32 accumulators: refused; 8x48 measured
//             slower than 6x64, by 3% in the median and 15% in the fastest call).
//   KC        the depth of each rank-KC update; K = 1024 at the cpu size, so 1024 keeps every
//             tile in registers over all of K with no f32 partial sums in memory.
//   NC        columns of a packed B block (KC x NC x 4 bytes must stay within L2: 1024 x 128 is
//             512 KiB); N = 384 at the cpu size.
//   MC        rows of one item: 768 covers any group at the cpu size (max_expert_size 256); 96
//             cuts groups into row blocks, finer items for balancing threads.
//   SHARE_A   0: each thread packs the lhs rows of its own groups into a private buffer;
//             1: all groups' rows are packed up front by all threads (8p's way; 8 MiB of f32 at
//             the cpu size, written out to L3 and read back). 1 measured a tie; it stays out of
//             the grid to keep it at 144 points (set it with -DKB_SHARE_A=1).
//   PACK_IN_KERNEL  1: the first row panel of each B block runs a micro-kernel that reads the
//             bf16 weights itself, widens them, uses them and stores them packed, so the packing
//             overlaps with FMAs (measured 2-3% faster in the median than 0, a separate packing
//             pass); AVX-512 path only.
//   PF, PFA   prefetch distances (k steps) of B and A in the micro-kernel, 8p's values.
//   AMX_KC, AMX_NC  the AMX path's K per pass and B panel columns, as in 8p_GEMM.cpp. NC 384
//            (all of N at the cpu size) tuned 1.18-1.24x faster than 128 on the AMX Xeon in two
//            runs (2026-12-04): the default.
// On AVX-512, 2 x 2 x 3 x 3 x 2 x 2 = 144 points, 36 of them (8x64) invalid; on AMX, 4 (the
// [path] tags say which path reads each tunable; `kbench tune` grids this machine's path).
// clang-format off
// tune paths: amx avx512 avx2 scalar
// tune: KB_MR = 6 8 (default 6) [avx512]
// tune: KB_NR = 48 64 (default 64) [avx512]
// tune: KB_KC = 256 512 1024 (default 1024) [avx512 avx2]
// tune: KB_NC = 64 128 192 (default 128) [avx512 avx2]
// tune: KB_MC = 96 768 (default 768) [avx512 avx2]
// tune: KB_SHARE_A = 0 (default 0) [avx512 avx2]
// tune: KB_PACK_IN_KERNEL = 0 1 (default 1) [avx512]
// tune: KB_PF = 8 (default 8) [avx512 avx2]
// tune: KB_PFA = 32 (default 32) [avx512 avx2]
// tune: KB_AMX_KC = 256 1024 (default 256) [amx]
// tune: KB_AMX_NC = 128 384 (default 384) [amx]
// clang-format on
#ifndef KB_MR
#define KB_MR 6
#endif
#ifndef KB_NR
#define KB_NR 64
#endif
#ifndef KB_AMX_KC
#define KB_AMX_KC 256
#endif
#ifndef KB_AMX_NC
#define KB_AMX_NC 384
#endif
#ifndef KB_KC
#define KB_KC 1024
#endif
#ifndef KB_NC
#define KB_NC 128
#endif
#ifndef KB_MC
#define KB_MC 768
#endif
#ifndef KB_SHARE_A
#define KB_SHARE_A 0
#endif
#ifndef KB_PACK_IN_KERNEL
#define KB_PACK_IN_KERNEL 1
#endif
#ifndef KB_PF
#define KB_PF 8
#endif
#ifndef KB_PFA
#define KB_PFA 32
#endif

// 32 zmm registers hold the accumulators, NR/16 B vectors and a broadcast; two FMA ports with a
// 4-cycle latency need at least 8 independent accumulators.
static_assert(KB_NR % 16 == 0 && KB_MR * (KB_NR / 16) <= 28, "KB_MR x KB_NR: <= 28 accumulators");
static_assert(KB_MR * (KB_NR / 16) >= 8, "KB_MR x KB_NR: at least 8 accumulators");
static_assert(KB_KC >= 16 && KB_MC >= KB_MR && KB_NC >= KB_NR, "blocks of at least one tile");

namespace {

using blocked_gemm::Gemm;
using blocked_gemm::Isa;
using std::int64_t;

// Zero rows [from, to) of the (rows x n) bf16 output: +0 is the all-zero bit pattern.
void zero_rows(uint16_t* out, int64_t n, int64_t from, int64_t to) {
  if (to > from)
    std::memset(out + from * n, 0, static_cast<size_t>((to - from) * n) * sizeof(uint16_t));
}

// The extents of a call whose tensors have the workload's signature: lhs (M, K), rhs (G, K, N),
// group_sizes (G) i32, out (M, N) bf16, and max_expert_size among the parameters.
struct CallShape {
  int64_t m, k, groups, n;
  double max_expert_size;
};

std::optional<CallShape> shape_of_call(const kb_config* cfg, const kb_tensor* inputs,
                                       int32_t num_inputs, const kb_tensor* outputs,
                                       int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1) return std::nullopt;
  const kb_tensor& lhs = inputs[0];
  const kb_tensor& rhs = inputs[1];
  const kb_tensor& sizes = inputs[2];
  const kb_tensor& out = outputs[0];
  if (lhs.rank != 2 || rhs.rank != 3 || sizes.rank != 1 || out.rank != 2 || lhs.dtype != KB_BF16 ||
      rhs.dtype != KB_BF16 || sizes.dtype != KB_I32 || out.dtype != KB_BF16)
    return std::nullopt;
  const CallShape s{lhs.shape[0], lhs.shape[1], rhs.shape[0], rhs.shape[2],
                    kb_param_or(cfg, "max_expert_size", -1.0)};
  if (rhs.shape[1] != s.k || sizes.shape[0] != s.groups || out.shape[0] != s.m ||
      out.shape[1] != s.n || s.max_expert_size < 0)
    return std::nullopt;
  return s;
}

// One product per non-empty group on its own rows (at most max_expert_size of them); the rows
// between and after the groups' covered runs are zeroed here, the covered ones written once.
// nullopt where the group sizes are negative or overrun the rows.
std::optional<std::vector<Gemm>> group_products(const CallShape& s, const uint16_t* a,
                                                const uint16_t* b, const int32_t* sizes,
                                                uint16_t* c) {
  std::vector<Gemm> products;
  products.reserve(static_cast<size_t>(s.groups));
  int64_t start = 0, covered_to = 0;
  for (int64_t g = 0; g < s.groups; ++g) {
    if (sizes[g] < 0 || start + sizes[g] > s.m) return std::nullopt;
    const int64_t rows = std::min<int64_t>(sizes[g], static_cast<int64_t>(s.max_expert_size));
    if (rows > 0) {
      zero_rows(c, s.n, covered_to, start);
      if (s.k == 0)
        zero_rows(c, s.n, start, start + rows);  // the empty sum
      else
        products.push_back(
            {a + start * s.k, s.k, b + g * s.k * s.n, s.n, c + start * s.n, s.n, rows, s.k, s.n});
      covered_to = start + rows;
    }
    start += sizes[g];
  }
  zero_rows(c, s.n, covered_to, s.m);
  return products;
}

// The products on this CPU's best path (include/isa.h); false where scratch could not be
// allocated.
bool run_products(const std::vector<Gemm>& products, int threads) {
  static const Isa path = blocked_gemm::select_path();
  const blocked_gemm::Blocking blocking{KB_KC, KB_MC, KB_NC, KB_SHARE_A != 0};
  const blocked_gemm::AmxBlocking amx_blocking{KB_AMX_KC, KB_AMX_NC};
  const Gemm* p = products.data();
  const auto count = static_cast<int64_t>(products.size());
  switch (path) {
    case Isa::kAmx:
      return blocked_gemm::gemm_amx(p, count, amx_blocking, threads);
    case Isa::kAvx512:
      return blocked_gemm::gemm_blocked<KB_MR, KB_NR, false>(
          p, count, blocking, threads,
          blocked_gemm::ukernel_avx512<KB_MR, KB_NR, KB_PF, KB_PFA, false>,
          KB_PACK_IN_KERNEL ? blocked_gemm::ukernel_avx512<KB_MR, KB_NR, KB_PF, KB_PFA, false, true>
                            : nullptr);
    case Isa::kAvx2: {
      constexpr int kMr = blocked_gemm::kMrAvx2, kNr = blocked_gemm::kNrAvx2;
      return blocked_gemm::gemm_blocked<kMr, kNr, false>(
          p, count, blocking, threads, blocked_gemm::ukernel_avx2<kMr, kNr, KB_PF, KB_PFA>);
    }
    case Isa::kScalar:
      break;
  }
  return blocked_gemm::gemm_scalar(p, count);
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  const std::optional<CallShape> shape =
      shape_of_call(cfg, inputs, num_inputs, outputs, num_outputs);
  if (!shape) return 1;
  if (shape->m == 0 || shape->n == 0) return 0;
  const std::optional<std::vector<Gemm>> products = group_products(
      *shape, static_cast<const uint16_t*>(inputs[0].data),
      static_cast<const uint16_t*>(inputs[1].data), static_cast<const int32_t*>(inputs[2].data),
      static_cast<uint16_t*>(outputs[0].data));
  if (!products) return 1;
  if (products->empty()) return 0;
  const int threads = cfg->num_threads > 0 ? cfg->num_threads : 1;
  return run_products(*products, threads) ? 0 : 1;
}
