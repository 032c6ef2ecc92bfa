// 6p_Paged_Attention expert: GQA decode attention, one query token per sequence, over a shuffled
// paged bf16 KV cache: out[s, h] = softmax_j(q[s, h] . k[s, j, h / G] * D^-0.5) @ v[s, :, h / G]
// over the keys j < kv_lens[s] (all S_max of them, weights equal, when kv_lens[s] <= 0).
//
// Bandwidth-bound (8 FLOPs per cache byte), so the kernel is built around reading every K/V byte
// once, in place, while the compute runs:
//   for each sequence (optionally a key range of it: the work units), all H_q query rows widened
//   to f32 and pre-multiplied by D^-0.5 * log2(e) (the softmax then runs on exp2)
//     for each block of BK keys, token rows located through the page table (no gather copy):
//       prefetch the token rows KB_PF keys ahead, spread over this block's compute
//       for each kv head: its G query rows
//         S = Q K^T (G x BK)    each K row widened once in registers, used by all G rows
//         online softmax: m' = max(m, max S), P = exp2(S - m'), l = l * exp2(m - m') + sum P
//         O = O * exp2(m - m') + P V (G x D), each V row widened once, used by all G rows
//   out = bf16(O / l)
// A unit covers every kv head, so each page (P token rows of H_kv * D contiguous values) is
// fetched front to back as one contiguous range, and its 4 KiB pages are walked once rather than
// once per head. Pages are shuffled, so no hardware prefetcher can follow a sequence from one page
// to the next: the software prefetch follows the page table (Prefetcher).
//
// Widening bf16 without a shuffle: a 512-bit load of 32 bf16 (16 dwords) gives the even elements
// as f32 by a 16-bit left shift of each dword and the odd ones by masking the low half. The query
// rows and the accumulator O are kept in the same even/odd order per 32-element chunk, so the
// permutation is never undone inside the loop (only once per unit, on H_q x D values): one ALU op
// per 16 widened values, each used by G = 8 FMAs.
//
// The scores are dot products over D of row-major K: per (row, key) a 16-lane partial sum, reduced
// 16 keys at a time by a transposing add tree (unpack, unpack, shuffle, shuffle: 15 combines per
// row and 16 keys) whose output is the 16 scores in key order.
//
// Threads: units are (sequence, key range); a sequence's keys are split (whole blocks) only until
// the units share out evenly over the threads or number 4 per thread, and the partial softmax
// states (m, l, O) of a split sequence are merged afterwards. kv_lens[s] <= 0 masks every key: the
// original's softmax over equal scores, i.e. the mean of all S_max values (scale 0 here).
//
// Paths, chosen at the first call by isa::best_isa() (include/isa.h):
//   AVX-512F/BW/VL/DQ: the above, 16 lanes, up to 8 query rows per pass (16 accumulators);
//   AVX2+FMA: the same with 8 lanes, 16-element chunks and up to 4 rows per pass (G = 8 runs as
//     two passes over each block, which stays in L1/L2 between them), hadd reduction;
//   scalar: plain loops, for x86-64 without AVX2.
// No AVX512-BF16 / AMX path: neither exists on the Ice Lake VM this was written on, so it could not
// be run; see docs/experts.md.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "include/vector_math.h"
#include "kbench/kernel.h"

// GCC 12 flags its own _mm512_undefined_*() placeholders inside intrinsics as "maybe
// uninitialized" under -Wall: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// Tunables (the tuner parses these lines).
// KB_BK: keys per block (scores H_q x BK; O rescaled once per block and kv head).
// KB_PF: software prefetch distance in keys (whole token rows of K and V; 32 keys are 2 pages at
//   page size 16, 256 KiB of K and V at the cpu size, well inside L2).
// KB_PF_L2: 1 prefetches into L2 only (prefetcht1), 0 into L1 (prefetcht0).
// KB_PF_MODE: 0 spread over the block's compute, 1 burst at the block's start, 2 demand touch
//   (see Prefetcher).
// tune: KB_BK = 16 32 64 (default 32)
// tune: KB_PF = 16 32 64 128 (default 32)
// tune: KB_PF_L2 = 0 1 (default 0)
// tune: KB_PF_MODE = 0 1 2 (default 0)
#ifndef KB_BK
#define KB_BK 32
#endif
#ifndef KB_PF
#define KB_PF 32
#endif
#ifndef KB_PF_L2
#define KB_PF_L2 0
#endif
#ifndef KB_PF_MODE
#define KB_PF_MODE 0
#endif
// Not tunables. KB_MAX_ISA (include/isa.h) caps the path for tests; KB_MIN_SPLITS forces every
// sequence's keys to be split that many ways (the merge path) whatever the thread count.
#ifndef KB_MIN_SPLITS
#define KB_MIN_SPLITS 1
#endif

static_assert(KB_BK % 16 == 0 && KB_BK >= 16 && KB_BK <= 256, "KB_BK: whole 16-key groups");
static_assert(KB_PF >= 0, "KB_PF: a distance in keys");
static_assert(KB_PF_MODE >= 0 && KB_PF_MODE <= 2, "KB_PF_MODE: 0 spread, 1 burst, 2 touch");

namespace {

using namespace vector_math;

using std::int64_t;
using std::uint16_t;

constexpr int kBK = KB_BK;
constexpr float kLog2e = 1.44269504088896340736f;

// One work unit: keys [k0, k1) of one sequence, for all its H_q query rows (every kv head).
struct Unit {
  const uint16_t* k;          // k_pages: token row t (all heads) at k + t * tok
  const uint16_t* v;          // v_pages, the same
  const std::int32_t* table;  // the sequence's page table
  const uint16_t* q;          // the sequence's H_q query rows (bf16, D apart)
  int64_t page, tok, dim, group, kv_heads;
  int64_t k0, k1;
  float scale;  // D^-0.5 * log2(e); 0 when no key is visible (all scores equal: the mean of V)
  // Results, natural layout: m[H_q] (log2 domain), l[H_q], o[H_q x D] (unnormalized).
  float *m, *l, *o;
};

// One kv head's view of a block: its K and V rows are k + off[j], v + off[j], dim elements each.
struct Head {
  const uint16_t* k;
  const uint16_t* v;
  int64_t dim;
};

// Element offsets of the rows of consecutive keys, starting at key j (one division per cursor).
struct KeyCursor {
  const std::int32_t* table;
  int64_t page, tok, pi, t;
  KeyCursor(const std::int32_t* table_, int64_t page_, int64_t tok_, int64_t j)
      : table(table_), page(page_), tok(tok_), pi(j / page_), t(j % page_) {}
  int64_t next() {
    const int64_t off = (static_cast<int64_t>(table[pi]) * page + t) * tok;
    if (++t == page) {
      t = 0;
      ++pi;
    }
    return off;
  }
};

// A block of keys: the element offsets of its n token rows (all heads; a head adds h * D).
struct Block {
  int64_t off[kBK];
  int n;
};

inline void prefetch_line(const char* p) {
  _mm_prefetch(p, KB_PF_L2 ? _MM_HINT_T1 : _MM_HINT_T0);
}

// Software prefetch of the keys KB_PF ahead of the block being computed, over whole token rows
// (every head) of K and V. Within a page the token rows are contiguous, so each page is fetched
// front to back; across pages it follows the page table, which no hardware prefetcher can.
//   KB_PF_MODE 0: spread: the block's compute calls pump() at fixed sites (per key pair of the
//     scores, per chunk of the value pass), each issuing an equal share of the lines, so the
//     prefetches overlap the compute without filling the fill buffers at once;
//   KB_PF_MODE 1: burst: every line prefetched at the block's start;
//   KB_PF_MODE 2: touch: every line read with a demand load at the block's start.
// Measured at the cpu size (one thread): spread 17.8-21 ms, burst 30-31 ms, touch 26-34 ms. A burst
// most likely stalls on the fill buffers (a prefetch that finds them full waits; no PMU counters
// here to confirm), so it does not overlap the compute; the spread sites hand out a few lines at a
// time. The pump must stay cheap: a first version with a per-line page-table cursor in the hot
// loops cost 45% of the in-cache compute.
class Prefetcher {
 public:
  explicit Prefetcher(const Unit& u)
      : k_(reinterpret_cast<const char*>(u.k)),
        v_(reinterpret_cast<const char*>(u.v)),
        cursor_(u.table, u.page, u.tok, std::min(u.k0 + KB_PF, u.k1)),
        next_(std::min(u.k0 + KB_PF, u.k1)),
        end_(u.k1),
        row_bytes_(u.tok * static_cast<int64_t>(sizeof(uint16_t))) {}

  // A new block of `keys` keys whose compute calls pump() about `sites` times: the rows to fetch
  // are the next `keys` keys of the stream.
  void begin_block(int64_t keys, int64_t sites) {
    nrows_ = 0;
    if (KB_PF > 0)
      for (; nrows_ < keys && next_ < end_; ++nrows_, ++next_)
        rows_[nrows_] = cursor_.next() * static_cast<int64_t>(sizeof(uint16_t));
    row_ = 0;
    pos_ = 0;
    const int64_t lines = nrows_ * ((row_bytes_ + 63) / 64);
    per_site_ =
        static_cast<int>((lines + std::max<int64_t>(1, sites) - 1) / std::max<int64_t>(1, sites));
    if (nrows_ == 0) per_site_ = 0;
    if (KB_PF_MODE == 1) finish();
    if (KB_PF_MODE == 2) touch();
  }
  // One site's share of the lines (spread mode only).
  inline void pump() {
    if (KB_PF_MODE != 0) return;
    for (int i = 0; i < per_site_; ++i) {
      if (pos_ >= row_bytes_) {
        if (++row_ >= nrows_) {
          per_site_ = 0;
          return;
        }
        pos_ = 0;
      }
      prefetch(k_ + rows_[row_] + pos_);
      prefetch(v_ + rows_[row_] + pos_);
      pos_ += 64;
    }
  }
  // Whatever the sites left.
  void finish() {
    for (; row_ < nrows_; ++row_, pos_ = 0)
      for (; pos_ < row_bytes_; pos_ += 64) {
        prefetch(k_ + rows_[row_] + pos_);
        prefetch(v_ + rows_[row_] + pos_);
      }
    per_site_ = 0;
  }

 private:
  static inline void prefetch(const char* p) {
    _mm_prefetch(p, KB_PF_L2 ? _MM_HINT_T1 : _MM_HINT_T0);
  }
  void touch() {
    unsigned sink = 0;
    for (int r = 0; r < nrows_; ++r)
      for (int64_t pos = 0; pos < row_bytes_; pos += 64)
        sink += static_cast<unsigned char>(
                    *reinterpret_cast<const volatile char*>(k_ + rows_[r] + pos)) +
                static_cast<unsigned char>(
                    *reinterpret_cast<const volatile char*>(v_ + rows_[r] + pos));
    sink_ += sink;
    nrows_ = 0;
    per_site_ = 0;
  }

  const char* k_;
  const char* v_;
  KeyCursor cursor_;
  int64_t next_, end_, row_bytes_;
  int64_t rows_[kBK];  // byte offsets of the rows being fetched
  int nrows_ = 0, row_ = 0, per_site_ = 0;
  int64_t pos_ = 0;
  unsigned sink_ = 0;  // keeps the touching loads alive
};

// The query rows r0..r0+rows-1 of u, widened and scaled, as `chunk`-element chunks each holding the
// chunk's even elements then its odd ones (zero past D): the order a widened bf16 chunk has.
void load_queries(const Unit& u, int64_t r0, int rows, int chunk, float* q) {
  const int64_t dpad = round_up(u.dim, chunk);
  for (int r = 0; r < rows; ++r) {
    const uint16_t* src = u.q + (r0 + r) * u.dim;
    float* dst = q + r * dpad;
    for (int64_t d = 0; d < dpad; ++d) {
      const int64_t c = d / chunk, i = d % chunk;
      const int64_t e = i < chunk / 2 ? c * chunk + 2 * i : c * chunk + 2 * (i - chunk / 2) + 1;
      dst[d] = e < u.dim ? kb_bf16_to_f32(src[e]) * u.scale : 0.0f;
    }
  }
}

// O rows (chunked even/odd order, dpad wide) back to natural order into u.o rows r0...
void store_state(const Unit& u, int64_t r0, int rows, int chunk, const float* o, const float* m,
                 const float* l) {
  const int64_t dpad = round_up(u.dim, chunk);
  for (int r = 0; r < rows; ++r) {
    float* dst = u.o + (r0 + r) * u.dim;
    for (int64_t d = 0; d < dpad; ++d) {
      const int64_t c = d / chunk, i = d % chunk;
      const int64_t e = i < chunk / 2 ? c * chunk + 2 * i : c * chunk + 2 * (i - chunk / 2) + 1;
      if (e < u.dim) dst[e] = o[r * dpad + d];
    }
    u.m[r0 + r] = m[r];
    u.l[r0 + r] = l[r];
  }
}

// One thread's scratch: queries, scores, state of one row group.
struct Scratch {
  AlignedBuffer q, s, o, state;
};

Scratch& thread_scratch() {
  static thread_local Scratch scratch;
  return scratch;
}

// The key loop shared by the paths: blocks of BK keys, the rows located through the page table;
// for each block, each kv head, each group of at most `max_rows` of its query rows runs the path's
// three steps. State: q, o (H_q x dpad), m, l, alpha (H_q each), scores s (max_rows x kBK).
template <class Steps>
void run_unit(const Unit& u, int max_rows, int chunk) {
  Scratch& sc = thread_scratch();
  const int64_t dpad = round_up(u.dim, chunk);
  const int64_t q_rows = u.group * u.kv_heads;
  const int64_t groups = (u.group + max_rows - 1) / max_rows;
  float* q = sc.q.get(q_rows * dpad);
  float* o = sc.o.get(q_rows * dpad);
  float* s = sc.s.get(static_cast<int64_t>(max_rows) * kBK);
  float* state = sc.state.get(3 * q_rows);
  float *m = state, *l = state + q_rows, *alpha = state + 2 * q_rows;
  load_queries(u, 0, static_cast<int>(q_rows), chunk, q);
  std::fill(o, o + q_rows * dpad, 0.0f);
  std::fill(m, m + q_rows, -INFINITY);
  std::fill(l, l + q_rows, 0.0f);

  Block b;
  KeyCursor cur(u.table, u.page, u.tok, u.k0);
  Prefetcher pf(u);
  for (int64_t j0 = u.k0; j0 < u.k1; j0 += kBK) {
    b.n = static_cast<int>(std::min<int64_t>(kBK, u.k1 - j0));
    for (int j = 0; j < b.n; ++j) b.off[j] = cur.next();
    pf.begin_block(b.n, u.kv_heads * groups * Steps::sites(b.n, u.dim));
    for (int64_t h = 0; h < u.kv_heads; ++h) {
      const Head hd{u.k + h * u.dim, u.v + h * u.dim, u.dim};
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t r0 = h * u.group + g * max_rows;
        const int rows = static_cast<int>(std::min<int64_t>(max_rows, u.group - g * max_rows));
        Steps::scores(hd, b, pf, rows, q + r0 * dpad, s);
        Steps::softmax(b.n, rows, s, m + r0, l + r0, alpha + r0);
        Steps::accumulate(hd, b, pf, rows, s, alpha + r0, o + r0 * dpad);
      }
    }
    pf.finish();
  }
  store_state(u, 0, static_cast<int>(q_rows), chunk, o, m, l);
}

// ---- Scalar path (natural layout: chunk 2 is the identity order) ----

struct ScalarSteps {
  static int64_t sites(int n, int64_t) { return 2 * n; }
  static void scores(const Head& u, const Block& b, Prefetcher& pf, int rows, const float* q,
                     float* s) {
    const int64_t dpad = round_up(u.dim, 2);
    for (int j = 0; j < b.n; ++j) {
      pf.pump();
      const uint16_t* k = u.k + b.off[j];
      for (int r = 0; r < rows; ++r) {
        float acc = 0.0f;
        for (int64_t d = 0; d < u.dim; ++d) acc += q[r * dpad + d] * kb_bf16_to_f32(k[d]);
        s[r * kBK + j] = acc;
      }
    }
  }
  static void softmax(int n, int rows, float* s, float* m, float* l, float* alpha) {
    for (int r = 0; r < rows; ++r) {
      float* row = s + r * kBK;
      float mx = -INFINITY;
      for (int j = 0; j < n; ++j) mx = std::max(mx, row[j]);
      const float m_new = std::max(m[r], mx);
      float sum = 0.0f;
      for (int j = 0; j < n; ++j) sum += (row[j] = std::exp2(row[j] - m_new));
      alpha[r] = std::exp2(m[r] - m_new);  // 0 on the first block (m = -inf)
      l[r] = l[r] * alpha[r] + sum;
      m[r] = m_new;
    }
  }
  static void accumulate(const Head& u, const Block& b, Prefetcher& pf, int rows, const float* p,
                         const float* alpha, float* o) {
    const int64_t dpad = round_up(u.dim, 2);
    for (int r = 0; r < rows; ++r)
      for (int64_t d = 0; d < u.dim; ++d) o[r * dpad + d] *= alpha[r];
    for (int j = 0; j < b.n; ++j) {
      pf.pump();
      const uint16_t* v = u.v + b.off[j];
      for (int64_t d = 0; d < u.dim; ++d) {
        const float x = kb_bf16_to_f32(v[d]);
        for (int r = 0; r < rows; ++r) o[r * dpad + d] += p[r * kBK + j] * x;
      }
    }
  }
};

// ---- AVX-512 path: 32-element chunks (16 even, 16 odd), up to 8 rows ----

// The bf16 mask of chunk c of a D-element row: whole chunks, then the D tail.
KB_TARGET_AVX512 inline __mmask32 chunk_mask(int64_t dim, int64_t c) {
  const int64_t k = std::min<int64_t>(32, dim - 32 * c);
  return k >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << k) - 1u);
}

// Widen 32 bf16 into its even and odd elements as f32: a plain load when D is whole chunks, else
// a masked one (zeros past D; the masked word load costs an extra ALU op).
template <bool kMasked>
KB_TARGET_AVX512 inline void widen_avx512(const uint16_t* src, __mmask32 mask, __m512& even,
                                          __m512& odd) {
  const __m512i x = kMasked ? _mm512_maskz_loadu_epi16(mask, src) : _mm512_loadu_si512(src);
  even = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
  odd = _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

// S (R rows x n keys, scores in key order into s rows kBK apart) = Q K^T, two keys at a time; 16
// keys' partial sums are reduced together by the transposing add tree.
template <int R, bool kMasked>
KB_TARGET_AVX512 void scores_avx512(const Head& u, const Block& b, Prefetcher& pf, const float* q,
                                    float* s) {
  const int64_t chunks = (u.dim + 31) / 32;
  const int64_t dpad = chunks * 32;
  const __mmask32 tail = chunk_mask(u.dim, chunks - 1);
  alignas(64) float part[R][8][16];  // level 1 of the tree: one vector per key pair
  for (int j16 = 0; j16 < b.n; j16 += 16) {
    const int pairs = std::min(8, (b.n - j16 + 1) / 2);
    for (int p = 0; p < pairs; ++p) {
      const int j = j16 + 2 * p;
      const uint16_t* k0 = u.k + b.off[j];
      const uint16_t* k1 = j + 1 < b.n ? u.k + b.off[j + 1] : k0;  // a pad key, masked later
      pf.pump();
      __m512 acc0[R], acc1[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
      for (int64_t c = 0; c < chunks; ++c) {
        const __mmask32 mask = c + 1 < chunks ? ~__mmask32{0} : tail;
        __m512 e0, o0, e1, o1;
        widen_avx512<kMasked>(k0 + 32 * c, mask, e0, o0);
        widen_avx512<kMasked>(k1 + 32 * c, mask, e1, o1);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m512 qe = _mm512_load_ps(q + r * dpad + 32 * c);
          const __m512 qo = _mm512_load_ps(q + r * dpad + 32 * c + 16);
          acc0[r] = _mm512_fmadd_ps(qe, e0, acc0[r]);
          acc1[r] = _mm512_fmadd_ps(qe, e1, acc1[r]);
          acc0[r] = _mm512_fmadd_ps(qo, o0, acc0[r]);
          acc1[r] = _mm512_fmadd_ps(qo, o1, acc1[r]);
        }
      }
      // Per 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3].
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        _mm512_store_ps(part[r][p], _mm512_add_ps(_mm512_unpacklo_ps(acc0[r], acc1[r]),
                                                  _mm512_unpackhi_ps(acc0[r], acc1[r])));
    }
    for (int p = pairs; p < 8; ++p)
      for (int r = 0; r < R; ++r) _mm512_store_ps(part[r][p], _mm512_setzero_ps());
    for (int r = 0; r < R; ++r) {
      // Level 2: per 128-bit lane, keys 4i..4i+3 in order (each lane a quarter of the sum).
      __m512 t[4];
      for (int i = 0; i < 4; ++i) {
        const __m512d x = _mm512_castps_pd(_mm512_load_ps(part[r][2 * i]));
        const __m512d y = _mm512_castps_pd(_mm512_load_ps(part[r][2 * i + 1]));
        t[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)),
                             _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
      }
      // Level 3: 128-bit lanes (keys 0-3, 0-3, 4-7, 4-7) and (8-11, 8-11, 12-15, 12-15), halves.
      const __m512 v0 = _mm512_add_ps(_mm512_shuffle_f32x4(t[0], t[1], 0x44),
                                      _mm512_shuffle_f32x4(t[0], t[1], 0xEE));
      const __m512 v1 = _mm512_add_ps(_mm512_shuffle_f32x4(t[2], t[3], 0x44),
                                      _mm512_shuffle_f32x4(t[2], t[3], 0xEE));
      // Level 4: keys 0..15 in order.
      const __m512 w =
          _mm512_add_ps(_mm512_shuffle_f32x4(v0, v1, 0x88), _mm512_shuffle_f32x4(v0, v1, 0xDD));
      _mm512_store_ps(s + r * kBK + j16, w);
    }
  }
}

struct Avx512Steps {
  static constexpr int kMaxRows = 8;
  static constexpr int kChunk = 32;
  static int64_t sites(int n, int64_t dim) { return (n + 1) / 2 + (dim + 31) / 32; }

  KB_TARGET_AVX512 static void scores(const Head& u, const Block& b, Prefetcher& pf, int rows,
                                      const float* q, float* s) {
    if (u.dim % 32 == 0)
      scores_rows<false>(u, b, pf, rows, q, s);
    else
      scores_rows<true>(u, b, pf, rows, q, s);
  }

  template <bool M>
  KB_TARGET_AVX512 static void scores_rows(const Head& u, const Block& b, Prefetcher& pf, int rows,
                                           const float* q, float* s) {
    switch (rows) {
      case 1:
        return scores_avx512<1, M>(u, b, pf, q, s);
      case 2:
        return scores_avx512<2, M>(u, b, pf, q, s);
      case 3:
        return scores_avx512<3, M>(u, b, pf, q, s);
      case 4:
        return scores_avx512<4, M>(u, b, pf, q, s);
      case 5:
        return scores_avx512<5, M>(u, b, pf, q, s);
      case 6:
        return scores_avx512<6, M>(u, b, pf, q, s);
      case 7:
        return scores_avx512<7, M>(u, b, pf, q, s);
      default:
        return scores_avx512<8, M>(u, b, pf, q, s);
    }
  }

  KB_TARGET_AVX512 static void softmax(int n, int rows, float* s, float* m, float* l,
                                       float* alpha) {
    for (int r = 0; r < rows; ++r) {
      float* row = s + r * kBK;
      __m512 mx = _mm512_set1_ps(-INFINITY);
      for (int j = 0; j < n; j += 16)
        mx = _mm512_mask_max_ps(mx, first_lanes(n, j), mx, _mm512_load_ps(row + j));
      const float m_new = std::max(m[r], _mm512_reduce_max_ps(mx));
      const __m512 mv = _mm512_set1_ps(m_new);
      __m512 sum = _mm512_setzero_ps();
      for (int j = 0; j < n; j += 16) {
        const __m512 p = _mm512_maskz_mov_ps(
            first_lanes(n, j), exp2_avx512(_mm512_sub_ps(_mm512_load_ps(row + j), mv)));
        sum = _mm512_add_ps(sum, p);
        _mm512_store_ps(row + j, p);
      }
      alpha[r] = std::exp2(m[r] - m_new);  // 0 on the first block (m = -inf)
      l[r] = l[r] * alpha[r] + _mm512_reduce_add_ps(sum);
      m[r] = m_new;
    }
  }

  template <int R, bool kMasked>
  KB_TARGET_AVX512 static void accumulate_rows(const Head& u, const Block& b, Prefetcher& pf,
                                               const float* p, const float* alpha, float* o) {
    const int64_t chunks = (u.dim + 31) / 32;
    const int64_t dpad = chunks * 32;
    const __mmask32 tail = chunk_mask(u.dim, chunks - 1);
    for (int64_t c = 0; c < chunks; ++c) {
      const __mmask32 mask = c + 1 < chunks ? ~__mmask32{0} : tail;
      __m512 ae[R], ao[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 a = _mm512_set1_ps(alpha[r]);
        ae[r] = _mm512_mul_ps(a, _mm512_load_ps(o + r * dpad + 32 * c));
        ao[r] = _mm512_mul_ps(a, _mm512_load_ps(o + r * dpad + 32 * c + 16));
      }
      const uint16_t* vc = u.v + 32 * c;
      pf.pump();
      for (int j = 0; j < b.n; ++j) {
        __m512 ve, vo;
        widen_avx512<kMasked>(vc + b.off[j], mask, ve, vo);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m512 pb = _mm512_set1_ps(p[r * kBK + j]);
          ae[r] = _mm512_fmadd_ps(pb, ve, ae[r]);
          ao[r] = _mm512_fmadd_ps(pb, vo, ao[r]);
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        _mm512_store_ps(o + r * dpad + 32 * c, ae[r]);
        _mm512_store_ps(o + r * dpad + 32 * c + 16, ao[r]);
      }
    }
  }

  KB_TARGET_AVX512 static void accumulate(const Head& u, const Block& b, Prefetcher& pf, int rows,
                                          const float* p, const float* alpha, float* o) {
    if (u.dim % 32 == 0)
      accumulate_any<false>(u, b, pf, rows, p, alpha, o);
    else
      accumulate_any<true>(u, b, pf, rows, p, alpha, o);
  }

  template <bool M>
  KB_TARGET_AVX512 static void accumulate_any(const Head& u, const Block& b, Prefetcher& pf,
                                              int rows, const float* p, const float* alpha,
                                              float* o) {
    switch (rows) {
      case 1:
        return accumulate_rows<1, M>(u, b, pf, p, alpha, o);
      case 2:
        return accumulate_rows<2, M>(u, b, pf, p, alpha, o);
      case 3:
        return accumulate_rows<3, M>(u, b, pf, p, alpha, o);
      case 4:
        return accumulate_rows<4, M>(u, b, pf, p, alpha, o);
      case 5:
        return accumulate_rows<5, M>(u, b, pf, p, alpha, o);
      case 6:
        return accumulate_rows<6, M>(u, b, pf, p, alpha, o);
      case 7:
        return accumulate_rows<7, M>(u, b, pf, p, alpha, o);
      default:
        return accumulate_rows<8, M>(u, b, pf, p, alpha, o);
    }
  }
};

KB_TARGET_AVX512 void run_unit_avx512(const Unit& u) {
  run_unit<Avx512Steps>(u, Avx512Steps::kMaxRows, Avx512Steps::kChunk);
}

// ---- AVX2 path: 16-element chunks (8 even, 8 odd), up to 4 rows ----

// Widen 16 bf16 from src (whole chunk) into even and odd f32; the D tail goes through a zeroed copy
// (AVX2 has no 16-bit masked load, and reading past the row could leave the tensor).
KB_TARGET_AVX2 inline void widen_avx2(const uint16_t* src, int64_t valid, __m256& even,
                                      __m256& odd) {
  __m256i x;
  if (valid >= 16) {
    x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  } else {
    alignas(32) uint16_t tmp[16] = {};
    std::memcpy(tmp, src, static_cast<size_t>(valid) * sizeof(uint16_t));
    x = _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
  }
  even = _mm256_castsi256_ps(_mm256_slli_epi32(x, 16));
  odd = _mm256_castsi256_ps(_mm256_and_si256(x, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

// 8 lanes per (row, key) reduced 8 keys at a time: hadd, hadd, halves.
template <int R>
KB_TARGET_AVX2 void scores_avx2(const Head& u, const Block& b, Prefetcher& pf, const float* q,
                                float* s) {
  const int64_t chunks = (u.dim + 15) / 16;
  const int64_t dpad = chunks * 16;
  alignas(32) float part[R][8][8];
  for (int j8 = 0; j8 < b.n; j8 += 8) {
    const int keys = std::min(8, b.n - j8);
    for (int p = 0; p < 8; p += 2) {
      const int j = j8 + p;
      if (p >= keys) {
        for (int r = 0; r < R; ++r)
          _mm256_store_ps(part[r][p], _mm256_setzero_ps()),
              _mm256_store_ps(part[r][p + 1], _mm256_setzero_ps());
        continue;
      }
      const uint16_t* k0 = u.k + b.off[j];
      const uint16_t* k1 = p + 1 < keys ? u.k + b.off[j + 1] : k0;
      pf.pump();
      __m256 acc0[R], acc1[R];
      for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t valid = u.dim - 16 * c;
        __m256 e0, o0, e1, o1;
        widen_avx2(k0 + 16 * c, valid, e0, o0);
        widen_avx2(k1 + 16 * c, valid, e1, o1);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m256 qe = _mm256_load_ps(q + r * dpad + 16 * c);
          const __m256 qo = _mm256_load_ps(q + r * dpad + 16 * c + 8);
          acc0[r] = _mm256_fmadd_ps(qe, e0, acc0[r]);
          acc1[r] = _mm256_fmadd_ps(qe, e1, acc1[r]);
          acc0[r] = _mm256_fmadd_ps(qo, o0, acc0[r]);
          acc1[r] = _mm256_fmadd_ps(qo, o1, acc1[r]);
        }
      }
      for (int r = 0; r < R; ++r) {
        _mm256_store_ps(part[r][p], acc0[r]);
        _mm256_store_ps(part[r][p + 1], acc1[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      const __m256 h01 = _mm256_hadd_ps(_mm256_load_ps(part[r][0]), _mm256_load_ps(part[r][1]));
      const __m256 h23 = _mm256_hadd_ps(_mm256_load_ps(part[r][2]), _mm256_load_ps(part[r][3]));
      const __m256 h45 = _mm256_hadd_ps(_mm256_load_ps(part[r][4]), _mm256_load_ps(part[r][5]));
      const __m256 h67 = _mm256_hadd_ps(_mm256_load_ps(part[r][6]), _mm256_load_ps(part[r][7]));
      const __m256 lo = _mm256_hadd_ps(h01, h23), hi = _mm256_hadd_ps(h45, h67);
      const __m256 w =
          _mm256_add_ps(_mm256_permute2f128_ps(lo, hi, 0x20), _mm256_permute2f128_ps(lo, hi, 0x31));
      _mm256_store_ps(s + r * kBK + j8, w);
    }
  }
}

struct Avx2Steps {
  static constexpr int kMaxRows = 4;
  static constexpr int kChunk = 16;
  static int64_t sites(int n, int64_t dim) { return (n + 1) / 2 + (dim + 15) / 16; }

  KB_TARGET_AVX2 static void scores(const Head& u, const Block& b, Prefetcher& pf, int rows,
                                    const float* q, float* s) {
    switch (rows) {
      case 1:
        return scores_avx2<1>(u, b, pf, q, s);
      case 2:
        return scores_avx2<2>(u, b, pf, q, s);
      case 3:
        return scores_avx2<3>(u, b, pf, q, s);
      default:
        return scores_avx2<4>(u, b, pf, q, s);
    }
  }

  KB_TARGET_AVX2 static void softmax(int n, int rows, float* s, float* m, float* l, float* alpha) {
    for (int r = 0; r < rows; ++r) {
      float* row = s + r * kBK;
      const float m_new = row_max_avx2(row, n, m[r]);
      const __m256 mv = _mm256_set1_ps(m_new);
      __m256 sum = _mm256_setzero_ps();
      for (int j = 0; j < n; j += 8) {
        const __m256 p = _mm256_and_ps(exp2_avx2(_mm256_sub_ps(_mm256_load_ps(row + j), mv)),
                                       first_lanes_avx2(n, j));
        sum = _mm256_add_ps(sum, p);
        _mm256_store_ps(row + j, p);
      }
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, sum);
      float total = 0.0f;
      for (float x : lanes) total += x;
      alpha[r] = std::exp2(m[r] - m_new);
      l[r] = l[r] * alpha[r] + total;
      m[r] = m_new;
    }
  }

  template <int R>
  KB_TARGET_AVX2 static void accumulate_rows(const Head& u, const Block& b, Prefetcher& pf,
                                             const float* p, const float* alpha, float* o) {
    const int64_t chunks = (u.dim + 15) / 16;
    const int64_t dpad = chunks * 16;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t valid = u.dim - 16 * c;
      __m256 ae[R], ao[R];
      for (int r = 0; r < R; ++r) {
        const __m256 a = _mm256_set1_ps(alpha[r]);
        ae[r] = _mm256_mul_ps(a, _mm256_load_ps(o + r * dpad + 16 * c));
        ao[r] = _mm256_mul_ps(a, _mm256_load_ps(o + r * dpad + 16 * c + 8));
      }
      const uint16_t* vc = u.v + 16 * c;
      pf.pump();
      for (int j = 0; j < b.n; ++j) {
        __m256 ve, vo;
        widen_avx2(vc + b.off[j], valid, ve, vo);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m256 pb = _mm256_broadcast_ss(p + r * kBK + j);
          ae[r] = _mm256_fmadd_ps(pb, ve, ae[r]);
          ao[r] = _mm256_fmadd_ps(pb, vo, ao[r]);
        }
      }
      for (int r = 0; r < R; ++r) {
        _mm256_store_ps(o + r * dpad + 16 * c, ae[r]);
        _mm256_store_ps(o + r * dpad + 16 * c + 8, ao[r]);
      }
    }
  }

  KB_TARGET_AVX2 static void accumulate(const Head& u, const Block& b, Prefetcher& pf, int rows,
                                        const float* p, const float* alpha, float* o) {
    switch (rows) {
      case 1:
        return accumulate_rows<1>(u, b, pf, p, alpha, o);
      case 2:
        return accumulate_rows<2>(u, b, pf, p, alpha, o);
      case 3:
        return accumulate_rows<3>(u, b, pf, p, alpha, o);
      default:
        return accumulate_rows<4>(u, b, pf, p, alpha, o);
    }
  }
};

KB_TARGET_AVX2 void run_unit_avx2(const Unit& u) {
  run_unit<Avx2Steps>(u, Avx2Steps::kMaxRows, Avx2Steps::kChunk);
}

void run_unit_scalar(const Unit& u) {
  run_unit<ScalarSteps>(u, 8, 2);
}

using UnitFn = void (*)(const Unit&);

UnitFn select_path() {
  switch (isa::best_isa(isa::Isa::kAvx512)) {
    case isa::Isa::kAvx512:
    case isa::Isa::kAmx:
      return run_unit_avx512;
    case isa::Isa::kAvx2:
      return run_unit_avx2;
    case isa::Isa::kScalar:
      break;
  }
  return run_unit_scalar;
}

bool is(const kb_tensor& t, kb_dtype dtype, int rank) {
  return t.dtype == dtype && t.rank == rank;
}

// The extents of a call, or nullopt where its tensors do not have the workload's signature (or a
// page index falls outside the cache).
struct CallShape {
  int64_t seqs, q_heads, dim, pages, page, kv_heads, pages_per_seq;
};

std::optional<CallShape> shape_of_call(const kb_tensor* in, int32_t num_inputs,
                                       const kb_tensor* out, int32_t num_outputs) {
  if (num_inputs != 6 || num_outputs != 1) return std::nullopt;
  if (!is(in[0], KB_BF16, 3) || !is(in[1], KB_BF16, 4) || !is(in[2], KB_BF16, 4) ||
      !is(in[3], KB_I32, 1) || !is(in[4], KB_I32, 2) || !is(in[5], KB_I32, 1) ||
      (out[0].dtype != KB_BF16 && out[0].dtype != KB_F32) || out[0].rank != 3)
    return std::nullopt;
  const CallShape s{in[0].shape[0], in[0].shape[1], in[0].shape[2], in[1].shape[0],
                    in[1].shape[1], in[1].shape[2], in[4].shape[1]};
  if (s.seqs <= 0 || s.dim <= 0 || s.page <= 0 || s.kv_heads <= 0 || s.pages_per_seq <= 0 ||
      s.q_heads % s.kv_heads != 0 || in[1].shape[3] != s.dim ||
      std::memcmp(in[1].shape, in[2].shape, sizeof in[1].shape) != 0 || in[3].shape[0] != s.seqs ||
      in[4].shape[0] != s.seqs || in[5].shape[0] != s.seqs + 1 || out[0].shape[0] != s.seqs ||
      out[0].shape[1] != s.q_heads || out[0].shape[2] != s.dim)
    return std::nullopt;
  const auto* table = static_cast<const std::int32_t*>(in[4].data);
  for (int64_t i = 0; i < s.seqs * s.pages_per_seq; ++i)
    if (table[i] < 0 || table[i] >= s.pages) return std::nullopt;
  return s;
}

// Units are (sequence, key range) over all heads. Each sequence's keys (whole blocks) are split
// until the units share out evenly over the threads or are plentiful; the partial softmax states
// of a sequence's units are merged afterwards.
int64_t key_splits(int64_t seqs, int64_t capacity, int threads) {
  const int64_t max_splits = (capacity + kBK - 1) / kBK;
  int64_t splits = std::min<int64_t>(KB_MIN_SPLITS, max_splits);
  while (splits < max_splits && (seqs * splits) % threads != 0 && seqs * splits < 4 * threads)
    ++splits;
  return splits;
}

// Merges each sequence's splits (m in the log2 domain) and writes out = O / l. `state` holds, per
// unit, m and l of each query head, then its O rows.
void merge_splits(const CallShape& s, int64_t splits, const float* state, kb_tensor& out) {
  const int64_t unit_state = s.q_heads * (2 + s.dim);
  std::unique_ptr<float[]> acc(new float[static_cast<size_t>(s.dim)]);
  for (int64_t seq = 0; seq < s.seqs; ++seq) {
    for (int64_t r = 0; r < s.q_heads; ++r) {
      float m_max = -INFINITY;
      for (int64_t p = 0; p < splits; ++p)
        m_max = std::max(m_max, state[(seq * splits + p) * unit_state + r]);
      float l_sum = 0.0f;
      float* o = acc.get();
      std::fill(o, o + s.dim, 0.0f);
      for (int64_t p = 0; p < splits; ++p) {
        const float* st = state + (seq * splits + p) * unit_state;
        if (st[r] == -INFINITY) continue;
        const float w = std::exp2(st[r] - m_max);
        l_sum += w * st[s.q_heads + r];
        const float* so = st + 2 * s.q_heads + r * s.dim;
        for (int64_t d = 0; d < s.dim; ++d) o[d] += w * so[d];
      }
      const float inv = 1.0f / l_sum;
      const int64_t first = (seq * s.q_heads + r) * s.dim;
      if (out.dtype == KB_BF16) {
        auto* dst = static_cast<uint16_t*>(out.data) + first;
        for (int64_t d = 0; d < s.dim; ++d) dst[d] = kb_f32_to_bf16(o[d] * inv);
      } else {
        auto* dst = static_cast<float*>(out.data) + first;
        for (int64_t d = 0; d < s.dim; ++d) dst[d] = o[d] * inv;
      }
    }
  }
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* in, int32_t num_inputs, kb_tensor* out,
                      int32_t num_outputs) {
  const std::optional<CallShape> shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const CallShape& s = *shape;
  static const UnitFn run = select_path();
  const int64_t capacity = s.page * s.pages_per_seq;
  const int threads = cfg != nullptr && cfg->num_threads > 0 ? cfg->num_threads : 1;
  const int64_t splits = key_splits(s.seqs, capacity, threads);
  const int64_t units = s.seqs * splits;
  const int64_t unit_state = s.q_heads * (2 + s.dim);  // m, l, o of one unit

  static AlignedBuffer state_buf;  // partial states only, rewritten every call
  float* state = state_buf.get(units * unit_state);
  const auto* table = static_cast<const std::int32_t*>(in[4].data);
  const auto* kv_lens = static_cast<const std::int32_t*>(in[3].data);
  const auto* cu_q_lens = static_cast<const std::int32_t*>(in[5].data);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.dim))) * kLog2e;

  // One unit: its sequence's query row against one key range, into the unit's partial state.
  const auto run_one = [&](int64_t k) {
    const int64_t seq = k / splits, part = k % splits;
    const int64_t visible = std::clamp<int64_t>(kv_lens[seq], 0, capacity);
    const int64_t keys = visible > 0 ? visible : capacity;
    const int64_t per = round_up((keys + splits - 1) / splits, kBK);
    // The query row: dynamic_slice clamps cu_q_lens[seq] into the array.
    const int64_t row = std::clamp<int64_t>(cu_q_lens[seq], 0, s.seqs - 1);
    Unit u;
    u.k = static_cast<const uint16_t*>(in[1].data);
    u.v = static_cast<const uint16_t*>(in[2].data);
    u.table = table + seq * s.pages_per_seq;
    u.q = static_cast<const uint16_t*>(in[0].data) + row * s.q_heads * s.dim;
    u.page = s.page;
    u.tok = s.kv_heads * s.dim;
    u.dim = s.dim;
    u.group = s.q_heads / s.kv_heads;
    u.kv_heads = s.kv_heads;
    u.k0 = std::min(keys, part * per);
    u.k1 = std::min(keys, u.k0 + per);
    u.scale = visible > 0 ? scale : 0.0f;
    u.m = state + k * unit_state;
    u.l = u.m + s.q_heads;
    u.o = u.l + s.q_heads;
    if (u.k0 < u.k1) {
      run(u);
    } else {  // an empty tail split: contributes nothing to the merge
      std::fill(u.m, u.m + s.q_heads, -INFINITY);
      std::fill(u.l, u.l + s.q_heads + s.q_heads * s.dim, 0.0f);
    }
  };
  if (threads <= 1) {
    for (int64_t k = 0; k < units; ++k) run_one(k);
  } else {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t k = 0; k < units; ++k) run_one(k);
  }
  merge_splits(s, splits, state, out[0]);
  return 0;
}
