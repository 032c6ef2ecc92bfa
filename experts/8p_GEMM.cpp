// 8p_GEMM expert: out (M,N) bf16 = A (M,K) bf16 @ B (K,N) bf16, f32 accumulation, one rounding.
//
// A BLIS-style GEMM with a path per ISA, chosen at the first call:
//   AMX-BF16 (Sapphire Rapids+): 32x32 blocks of C in four tiles, a 32-row strip of A held in L1
//     over KC while it meets a packed NC-column panel of B (include/blocked_gemm.h);
//   AVX-512F: an MR x NR f32 register tile (default 6x64: 24 zmm accumulators);
//   AVX2+FMA: a 6x16 f32 register tile (12 ymm accumulators).
//
// The vector paths share BLIS's loops (see gemm_blocked):
//   for pc in K step KC:                       pack A[:, pc..] (bf16 -> f32) into MR-row panels
//     for jc in N step NC, ic in M step MC (threads): pack B[pc.., jc..] (bf16 -> f32) into
//                                              NR-column panels, a block that stays in L2
//       for ir, for jr: micro-kernel, a rank-KC update of an MR x NR f32 tile in registers
// Widening while packing pays the bf16 -> f32 conversion once per element per block instead of
// once per use. Keeping B in bf16 and widening in the micro-kernel (KB_BF16B=1) halves the bytes
// streamed from L2 but adds two ALU uops per 32 columns on the ports the FMAs use; it measured
// slower. Per k the micro-kernel does NR/16 aligned B loads, MR broadcasts of A (load-port uops)
// and MR*NR/16 FMAs. When K > KC the partial sums go to an f32 scratch of C; the last K block
// rounds to bf16 (round to nearest even, as kb_f32_to_bf16) in the micro-kernel's store, so the
// result is rounded exactly once.
//
// Edges: packing zero-pads A rows and B columns to whole tiles, so the micro-kernel always runs
// full tiles; a partial tile of C is stored to a temporary tile and its valid part copied out.
//
// The loops, packing, micro-kernels, the AMX path and the path choice live in
// include/blocked_gemm.h, shared with 11p_Megablox_GMM; this file holds the tunables and the call.
#include <cstdint>
#include <cstring>

#include "include/blocked_gemm.h"
#include "kbench/kernel.h"

// Tunables (the tuner parses the "tune:" lines, one parameter per line).
//   MR x NR  the AVX-512 register tile.
//   KC, NC   the packed B block (KC x NC x 4 bytes) of both vector paths; it must stay within L2:
//            768x480 and 384x960 (1.4 MiB) measured 20-25% slower than blocks of <= 0.75 MiB on
//            a 1.25 MiB L2. KC = K (768 at the cpu size) avoids the f32 partial sums of C (M x N,
//            written and re-read from L3/DRAM on every pass); with a narrow NC it measured ~3%
//            faster than KC 384 x NC 480. NC and MC are rounded down to whole tiles.
//   MC       rows of C sharing one packed B block (192, 384 and 768 tied at the cpu size).
//   PF, PFA  how many k steps ahead the micro-kernel prefetches B and A: PF 0 measured ~4% slower
//            than 4..24 (which tie), PFA 0 2-6% slower than 32 or 64 (which tie).
//   BF16B    1: B packed as bf16 and widened in the micro-kernel (measured slower, see above).
//   AMX_KC, AMX_NC  the AMX path's K per pass (the A strip, AMX_KC * 64 bytes, must stay in L1)
//            and packed B panel (K x AMX_NC bf16, in L2). On the AMX Xeon at the cpu size, KC 256
//            measured 10-15% faster than 768 (one pass, the 48 KiB strip spilling from L1). NC
//            672 (four equal panels of N = 2688, 1 MiB each) is the default: in the check program
//            (2026-12-04, B packed 128 columns at a time) 2.29-2.40 ms against 2.49-2.51 for 512
//            and 2.60-2.64 for 256 (they tied while B was packed one 16-column strip at a time).
// PF, PFA and MC keep one value so the AVX-512 grid stays at 162 points. The [path] tags say
// which path reads each tunable: `kbench tune` grids the path this machine takes (162 points on
// AVX-512, 8 on AMX, 9 on AVX2), the others at their defaults.
// clang-format off
// tune paths: amx avx512 avx2 scalar
// tune: KB_MR = 6 8 12 (default 6) [avx512]
// tune: KB_NR = 32 48 64 (default 64) [avx512]
// tune: KB_KC = 256 384 768 (default 768) [avx512 avx2]
// tune: KB_NC = 128 240 480 (default 128) [avx512 avx2]
// tune: KB_MC = 768 (default 768) [avx512 avx2]
// tune: KB_PF = 8 (default 8) [avx512 avx2]
// tune: KB_PFA = 32 (default 32) [avx512 avx2]
// tune: KB_BF16B = 0 1 (default 0) [avx512]
// tune: KB_AMX_KC = 256 768 (default 256) [amx]
// tune: KB_AMX_NC = 128 256 512 672 (default 672) [amx]
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
#define KB_AMX_NC 672
#endif
#ifndef KB_KC
#define KB_KC 768
#endif
#ifndef KB_MC
#define KB_MC 768
#endif
#ifndef KB_NC
#define KB_NC 128
#endif
#ifndef KB_PF
#define KB_PF 8
#endif
#ifndef KB_PFA
#define KB_PFA 32
#endif
// 1: the AVX-512 path keeps packed B in bf16 and widens it in the micro-kernel (half the bytes
// streamed from L2, two extra ALU uops per 32 columns on the FMA ports); 0: packs B as f32.
#ifndef KB_BF16B
#define KB_BF16B 0
#endif

// 32 zmm registers: the accumulators, NR/16 B vectors, and at least one spare; 4-cycle FMA latency
// on two FMA ports needs at least 8 independent accumulators.
static_assert(KB_NR % 16 == 0 && KB_NR >= 16, "KB_NR: whole zmm vectors");
static_assert(KB_MR >= 1 && KB_MR * (KB_NR / 16) <= 28, "KB_MR x KB_NR: at most 28 accumulators");
static_assert(KB_MR * (KB_NR / 16) >= 8, "KB_MR x KB_NR: at least 8 accumulators");
static_assert(KB_BF16B == 0 || KB_NR % 32 == 0, "KB_BF16B: whole 32-column bf16 vectors");
static_assert(KB_KC >= 16 && KB_MC >= KB_MR && KB_NC >= KB_NR, "blocks of at least one tile");

namespace {

using blocked_gemm::Gemm;
using blocked_gemm::Isa;
using blocked_gemm::TileIo;
using std::int64_t;

// The AVX-512 micro-kernel at this file's tunables; the check program times it alone.
template <int MR, int NR>
constexpr blocked_gemm::UkernelFn ukernel_avx512 =
    blocked_gemm::ukernel_avx512<MR, NR, KB_PF, KB_PFA, KB_BF16B != 0>;

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& ta = inputs[0];
  const kb_tensor& tb = inputs[1];
  kb_tensor& tc = outputs[0];
  if (ta.rank != 2 || tb.rank != 2 || tc.rank != 2 || ta.dtype != KB_BF16 || tb.dtype != KB_BF16 ||
      tc.dtype != KB_BF16)
    return 1;
  const int64_t m = ta.shape[0], k = ta.shape[1], n = tb.shape[1];
  const Gemm g{static_cast<const uint16_t*>(ta.data),
               k,
               static_cast<const uint16_t*>(tb.data),
               n,
               static_cast<uint16_t*>(tc.data),
               n,
               m,
               k,
               n};
  if (tb.shape[0] != k || tc.shape[0] != m || tc.shape[1] != n) return 1;
  if (m == 0 || n == 0) return 0;
  if (k == 0) {  // the empty sum: +0 everywhere
    std::memset(g.c, 0, static_cast<size_t>(m * n) * sizeof(uint16_t));
    return 0;
  }
  static const Isa path = blocked_gemm::select_path();
  const int threads = cfg->num_threads > 0 ? cfg->num_threads : 1;
  const blocked_gemm::Blocking blocking{KB_KC, KB_MC, KB_NC};
  const blocked_gemm::AmxBlocking amx_blocking{KB_AMX_KC, KB_AMX_NC};
  bool ok = false;  // false: scratch could not be allocated
  switch (path) {
    case Isa::kAmx:
      ok = blocked_gemm::gemm_amx(&g, 1, amx_blocking, threads);
      break;
    case Isa::kAvx512:
      ok = blocked_gemm::gemm_blocked<KB_MR, KB_NR, KB_BF16B != 0>(&g, 1, blocking, threads,
                                                                   ukernel_avx512<KB_MR, KB_NR>);
      break;
    case Isa::kAvx2: {
      constexpr int kMr = blocked_gemm::kMrAvx2, kNr = blocked_gemm::kNrAvx2;
      ok = blocked_gemm::gemm_blocked<kMr, kNr, false>(
          &g, 1, blocking, threads, blocked_gemm::ukernel_avx2<kMr, kNr, KB_PF, KB_PFA>);
      break;
    }
    case Isa::kScalar:
      ok = blocked_gemm::gemm_scalar(&g, 1);
      break;
  }
  return ok ? 0 : 1;
}
