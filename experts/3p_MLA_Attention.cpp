// 3p_MLA_Attention expert: DeepSeek-V3 multi-head latent attention, out (B,S,E) bf16.
//
// The algebra: MLA's up-projections are linear maps that the attention only ever contracts, so
// they are absorbed into the weights (the "weight absorption" DeepSeek-V3's inference uses):
//   scores_h = q_nope_h . k_nope_h + q_rope_h . k_rope
//            = (cq Wq_nope_h) . (latent Wk_h) + ...  = (cq (Wq_nope_h Wk_h^T)) . latent + ...
//   out      = sum_h (P_h latent Wv_h) Wo_h          = sum_h (P_h latent) (Wv_h Wo_h)
// so every head attends over the same keys [latent, rope(k_rope)] (kvl + rope = 128 wide) and the
// same values (latent, kvl = 64 wide): multi-query attention, 16 query heads on one kv head. Per
// call (weights are inputs: nothing is kept between calls):
//   Wd   = [q_down | kv_down]                          (E, ql + kvl + rope)   one f32 pack
//   Wq'  = per head [Wq_nope_h Wk_h^T | Wq_rope_h]     (ql, H*(kvl + rope))   one batched GEMM
//   Wvo  = per head Wv_h Wo_h                          (H*kvl, E)             one batched GEMM
//   [cq | kv] = x Wd;  q' = cq Wq' (rows t*H + h);  RoPE on q' rope parts and on kv's k_rope
//   attention (ATTN 1, default): the shared flash driver (include/flash_attention.h), one item
//     per (batch, head) reading the batch's keys as one GQA kv head (packed once per batch):
//     online softmax, key blocks right of the diagonal never visited;  Y (T, H*kvl)
//   out = bf16(Y Wvo)
// At the cpu size this executes ~2.4 GFLOP against the 4.66 the spec counts (the absorbed GEMMs
// are smaller, and masked key blocks are skipped). On the f32 path everything is f32 but the bf16
// rounding of q', the keys and Y around the flash driver (which reads and writes bf16; the baseline
// rounds q, k, v and the attention output too) and of the output: rel-L2 ~0.004 against the oracle,
// bound 0.02.
//
// Where the CPU has AMX (and ATTN 1), the GEMMs run on bf16 operands with f32 sums and round
// their results to bf16 in their own stores: cq, [latent, k_rope], Wq', q', Wvo and out (rel-L2
// ~0.005 against the oracle). q' and the keys are then RoPE'd in bf16, as the original rotates its
// bf16 q and k. With TILE_GEMM 1 (default) every GEMM but Wq' (whose B is transposed) runs on the
// AMX tile GEMM of include/blocked_gemm.h (8p's); Wq' and, with TILE_GEMM 0, all of them on
// oneDNN's matmul. On the AMX Xeon at the cpu size (2026-12-04, kbench eval, two runs each):
// 1.93-2.01x the baseline with oneDNN's GEMMs writing f32 and separate rounding passes, 2.59-2.73x
// with oneDNN rounding in its stores, 3.03-3.18x with the tile GEMM. Elsewhere the GEMMs run on
// f32 operands widened from bf16 once, through oneDNN's matmul (GEMM 1; OpenBLAS sgemm measured
// ~5% slower for these shapes on one thread). The elementwise
// passes (widening, RoPE, the GEMM path's softmax, rounding) are plain loops compiled per ISA with
// function-level target attributes (AVX-512, AVX2+FMA, baseline x86-64) and chosen by
// isa::best_isa(); the flash driver dispatches the same way, AMX included.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <vector>

#include "kbench/kernel.h"

// Tunables (the tuner parses the "tune:" lines).
//   ATTN  1: the attention through the shared flash-attention driver (include/flash_attention.h),
//         one item per (batch, head), the batch's latent keys packed once for its 16 heads (GQA
//         with one kv head); q', the keys and Y are rounded to bf16 around it, as the baseline
//         rounds q, k, v and the attention output. 0: stacked GEMMs per block of AQ positions
//         (AQ*H score rows against the block's causal prefix), softmax between them, all f32.
//   GEMM  0: OpenBLAS sgemm; 1: oneDNN f32 matmul (primitives created once per shape and kept).
//   TILE_GEMM  (AMX) 1: the tile GEMM of include/blocked_gemm.h, its K per pass AMX_KC and panel
//         AMX_NC (448: the 896-wide output in two panels, 3.16-3.18x against 3.05-3.08 at 256 and
//         2.88-2.90 at 896); 0: oneDNN's bf16 matmul.
//   BQ, BK, QK_*, PV_*: the flash driver's query / key blocks and micro-tiles (see the header);
//         Dv = kvl = 64 is exactly four zmm vectors, so PV_NV = 4 has no padded columns.
// clang-format off
// tune paths: amx avx512 avx2 scalar
// tune: KB_ATTN = 0 1 (default 1)
// tune: KB_AQ = 16 32 (default 32)
// tune: KB_GEMM = 0 1 (default 1)
// tune: KB_BQ = 32 64 (default 64)
// tune: KB_BK = 64 128 (default 64)
// tune: KB_TILE_GEMM = 0 1 (default 1) [amx]
// tune: KB_QK_MR = 8 (default 8) [avx512]
// tune: KB_QK_NV = 2 (default 2) [avx512]
// tune: KB_PV_MR = 6 (default 6) [avx512]
// tune: KB_PV_NV = 4 (default 4) [avx512]
// clang-format on
#ifndef KB_TILE_GEMM
#define KB_TILE_GEMM 1
#endif
#ifndef KB_AMX_KC
#define KB_AMX_KC 256
#endif
#ifndef KB_AMX_NC
#define KB_AMX_NC 448
#endif
#ifndef KB_ATTN
#define KB_ATTN 1
#endif
#ifndef KB_AQ
#define KB_AQ 32
#endif
#ifndef KB_GEMM
#define KB_GEMM 1
#endif
static_assert(KB_AQ >= 1, "KB_AQ: at least one query position per block");

#include "include/blocked_gemm.h"
#include "include/flash_attention.h"

namespace {

using std::int64_t;

#define KB_INLINE inline __attribute__((always_inline))

struct Shape {
  int64_t batch, seq, emb, heads, ql, kvl, nope, rope, vd;
  int64_t tokens() const { return batch * seq; }
  int64_t qk_in() const { return nope + rope; }  // q_up's per-head width
  int64_t dk() const { return kvl + rope; }      // the absorbed key width
};

// ---- Elementwise kernels: one generic body, instantiated per ISA by the wrappers below ----

KB_INLINE float bits_to_f32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// dst[r * ldd + c] = widen(src[r * lds + c]) for c < cols.
KB_INLINE void widen_impl(const uint16_t* src, int64_t lds, float* dst, int64_t ldd, int64_t rows,
                          int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* s = src + r * lds;
    float* d = dst + r * ldd;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) d[c] = bits_to_f32(static_cast<uint32_t>(s[c]) << 16);
  }
}

// Round to nearest even (as kb_f32_to_bf16; the values here are finite).
KB_INLINE void narrow_impl(const float* src, uint16_t* dst, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, &src[i], sizeof b);
    b += 0x7fffu + ((b >> 16) & 1u);
    dst[i] = static_cast<uint16_t>(b >> 16);
  }
}

// 2^x for x <= 0 (clamped at -126: the result then is 2^-126, nothing a sum of >= 1 notices):
// x = n + f with n = rint(x), f in [-0.5, 0.5]; 2^f by a degree-6 polynomial (relative error
// ~2e-7), 2^n put into the exponent bits.
KB_INLINE float exp2_neg(float x) {
  x = std::max(x, -126.0f);
  const float n = std::nearbyint(x);
  const float f = x - n;
  float p = 1.535336188319500e-4f;
  p = p * f + 1.339887440266574e-3f;
  p = p * f + 9.618437357674640e-3f;
  p = p * f + 5.550332471162809e-2f;
  p = p * f + 2.402264791363012e-1f;
  p = p * f + 6.931472028550421e-1f;
  p = p * f + 1.0f;
  const auto e = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  return p * bits_to_f32(e);
}

// Rows of scores (already scaled by log2 e): p = 2^(s - max) / sum over the first visible[r]
// columns, 0 beyond them (the causal mask: exp(-1e9 - max) is exactly 0 in f32).
KB_INLINE void softmax_impl(float* s, int64_t ld, int64_t rows, int64_t cols, int64_t heads,
                            int64_t first_visible) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = s + r * ld;
    const int64_t visible = std::min(cols, first_visible + r / heads);
    float m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (int64_t c = 0; c < visible; ++c) m = std::max(m, row[c]);
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < visible; ++c) {
      const float p = exp2_neg(row[c] - m);
      row[c] = p;
      sum += p;
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int64_t c = 0; c < visible; ++c) row[c] *= inv;
    for (int64_t c = visible; c < cols; ++c) row[c] = 0.0f;
  }
}

// The half-split rotation of `count` vectors of width 2*half (each `stride` floats apart) at one
// position: [x1 c - x2 s, x1 s + x2 c].
KB_INLINE void rope_impl(float* v, int64_t count, int64_t stride, int64_t half, const float* cs,
                         const float* sn) {
  for (int64_t k = 0; k < count; ++k) {
    float* x = v + k * stride;
#pragma omp simd
    for (int64_t i = 0; i < half; ++i) {
      const float x1 = x[i], x2 = x[i + half];
      x[i] = x1 * cs[i] - x2 * sn[i];
      x[i + half] = x1 * sn[i] + x2 * cs[i];
    }
  }
}

#define KB_DEFINE_ISA(suffix, attr)                                                               \
  attr void widen_##suffix(const uint16_t* src, int64_t lds, float* dst, int64_t ldd,             \
                           int64_t rows, int64_t cols) {                                          \
    widen_impl(src, lds, dst, ldd, rows, cols);                                                   \
  }                                                                                               \
  attr void narrow_##suffix(const float* src, uint16_t* dst, int64_t n) {                         \
    narrow_impl(src, dst, n);                                                                     \
  }                                                                                               \
  attr void softmax_##suffix(float* s, int64_t ld, int64_t rows, int64_t cols, int64_t heads,     \
                             int64_t first_visible) {                                             \
    softmax_impl(s, ld, rows, cols, heads, first_visible);                                        \
  }                                                                                               \
  attr void rope_##suffix(float* v, int64_t count, int64_t stride, int64_t half, const float* cs, \
                          const float* sn) {                                                      \
    rope_impl(v, count, stride, half, cs, sn);                                                    \
  }

KB_DEFINE_ISA(avx512, KB_TARGET_AVX512)
KB_DEFINE_ISA(avx2, KB_TARGET_AVX2)
KB_DEFINE_ISA(generic, )

struct RowOps {
  void (*widen)(const uint16_t*, int64_t, float*, int64_t, int64_t, int64_t);
  void (*narrow)(const float*, uint16_t*, int64_t);
  void (*softmax)(float*, int64_t, int64_t, int64_t, int64_t, int64_t);
  void (*rope)(float*, int64_t, int64_t, int64_t, const float*, const float*);
};

// The row operations of the best path this CPU takes (AVX-512 at most).
RowOps select_row_ops() {
  switch (isa::best_isa(isa::Isa::kAvx512)) {
    case isa::Isa::kAvx512:
    case isa::Isa::kAmx:
      return {widen_avx512, narrow_avx512, softmax_avx512, rope_avx512};
    case isa::Isa::kAvx2:
      return {widen_avx2, narrow_avx2, softmax_avx2, rope_avx2};
    case isa::Isa::kScalar:
      break;
  }
  return {widen_generic, narrow_generic, softmax_generic, rope_generic};
}

// ---- Scratch: grow-only f32 buffers (allocation only; every call rewrites what it reads) ----

struct Scratch {
  std::vector<uint16_t> qb, kvb, yb, cqb, wqb, wvob;
  std::vector<float> x, wd, qup, kup, vup, oproj, cqkv, wq, q, scores, y, wvo, out, cs, sn,
      rope_rows;
};

template <typename T>
T* sized(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// C (m x n, ldc) = alpha A (m x k, lda) op(B) (ldb), row-major f32.
void sgemm_openblas(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                    const float* b, int64_t ldb, bool b_trans, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_trans ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0f, c,
              static_cast<blasint>(ldc));
}

// The same through oneDNN's matmul, `batch` products at once (A, B, C `sa`, `sb`, `sc` elements
// apart), each operand f32 or bf16 (`at`, `bt`, `ct`; the sums are f32 either way). A primitive is
// JIT-compiled per (shape, strides, types, alpha) and kept: a primitive is code, not a result,
// and the attention blocks reuse a handful of shapes. One batched primitive for the per-head
// weight products instead of 16 calls: each call costs ~10 us of dispatch, and a single 64-row
// product is too small to reach the GEMM's speed.
using Dt = dnnl::memory::data_type;
void gemm_onednn(int64_t batch, int64_t m, int64_t n, int64_t k, float alpha, const void* a, Dt at,
                 int64_t lda, int64_t sa, const void* b, Dt bt, int64_t ldb, int64_t sb,
                 bool b_trans, void* c, Dt ct, int64_t ldc, int64_t sc) {
  using dnnl::memory;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  static dnnl::stream stream(engine);
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t, bool, float, int>;
  static std::map<Key, dnnl::matmul> cache;
  // A single product is 2-D: a batch dimension of stride 0 makes oneDNN fall back to its
  // reference matmul.
  const auto md = [batch](int64_t rows, int64_t cols, Dt type, int64_t stride, int64_t ld_rows,
                          int64_t ld_cols) {
    return batch == 1 ? memory::desc({rows, cols}, type, {ld_rows, ld_cols})
                      : memory::desc({batch, rows, cols}, type, {stride, ld_rows, ld_cols});
  };
  const memory::desc a_md = md(m, k, at, sa, lda, 1);
  const memory::desc b_md = b_trans ? md(k, n, bt, sb, 1, ldb) : md(k, n, bt, sb, ldb, 1);
  const memory::desc c_md = md(m, n, ct, sc, ldc, 1);
  const int types =
      static_cast<int>(at) * 256 * 256 + static_cast<int>(bt) * 256 + static_cast<int>(ct);
  const Key key{batch, m, n, k, lda, ldb, ldc, sa, sb, sc, b_trans, alpha, types};
  auto it = cache.find(key);
  if (it == cache.end()) {
    dnnl::primitive_attr attr;
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    it = cache
             .emplace(key, dnnl::matmul(dnnl::matmul::primitive_desc(
                               dnnl::matmul::desc(a_md, b_md, c_md), attr, engine)))
             .first;
  }
  memory am(a_md, engine, const_cast<void*>(a)), bm(b_md, engine, const_cast<void*>(b)),
      cm(c_md, engine, c);
  it->second.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  stream.wait();
}

void sgemm_onednn(int64_t batch, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, int64_t sa, const float* b, int64_t ldb, int64_t sb, bool b_trans,
                  float* c, int64_t ldc, int64_t sc) {
  gemm_onednn(batch, m, n, k, alpha, a, Dt::f32, lda, sa, b, Dt::f32, ldb, sb, b_trans, c, Dt::f32,
              ldc, sc);
}

// batch products C_i = alpha A_i op(B_i), through the path KB_GEMM selects.
void sgemm_batch(int64_t batch, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, int64_t sa, const float* b, int64_t ldb, int64_t sb, bool b_trans,
                 float* c, int64_t ldc, int64_t sc) {
  if (KB_GEMM == 1) {
    try {
      sgemm_onednn(batch, m, n, k, alpha, a, lda, sa, b, ldb, sb, b_trans, c, ldc, sc);
      return;
    } catch (const dnnl::error&) {
      // A shape or stride oneDNN has no primitive for on this CPU: OpenBLAS computes the same.
    }
  }
  for (int64_t i = 0; i < batch; ++i)
    sgemm_openblas(m, n, k, alpha, a + i * sa, lda, b + i * sb, ldb, b_trans, c + i * sc, ldc);
}

void sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, bool b_trans, float* c, int64_t ldc) {
  sgemm_batch(1, m, n, k, alpha, a, lda, 0, b, ldb, 0, b_trans, c, ldc, 0);
}

bool shape_of(const kb_tensor* in, int32_t num_inputs, const kb_tensor* out, int32_t num_outputs,
              Shape& s) {
  if (num_inputs != 7 || num_outputs != 1 || in[0].rank != 3 || out[0].rank != 3) return false;
  for (int i = 0; i < 7; ++i)
    if (in[i].dtype != KB_BF16 || (i > 0 && in[i].rank != 2)) return false;
  if (out[0].dtype != KB_BF16) return false;
  s.batch = in[0].shape[0];
  s.seq = in[0].shape[1];
  s.emb = in[0].shape[2];
  s.ql = in[1].shape[1];
  s.kvl = in[4].shape[0];
  s.rope = in[3].shape[1] - s.kvl;
  if (s.rope <= 0 || s.rope % 2 != 0) return false;
  const int64_t knope_w = in[4].shape[1];
  if ((in[2].shape[1] - knope_w) % s.rope != 0) return false;
  s.heads = (in[2].shape[1] - knope_w) / s.rope;
  if (s.heads <= 0 || knope_w % s.heads != 0 || in[5].shape[1] % s.heads != 0) return false;
  s.nope = knope_w / s.heads;
  s.vd = in[5].shape[1] / s.heads;
  const int64_t h = s.heads;
  return in[1].shape[0] == s.emb && in[2].shape[0] == s.ql && in[3].shape[0] == s.emb &&
         in[5].shape[0] == s.kvl && in[6].shape[0] == h * s.vd && in[6].shape[1] == s.emb &&
         out[0].shape[0] == s.batch && out[0].shape[1] == s.seq && out[0].shape[2] == s.emb &&
         s.batch > 0 && s.seq > 0 && s.nope > 0 && s.vd > 0 && s.kvl > 0 && s.ql > 0 && s.emb > 0;
}

// The tile GEMM's K per pass and panel width (TILE_GEMM 1).
constexpr blocked_gemm::AmxBlocking kAmxBlocking{KB_AMX_KC, KB_AMX_NC};

// Whether the GEMMs run on bf16 operands (AMX tiles): where the CPU has AMX, with the flash
// attention (which reads and writes bf16 already) and oneDNN chosen. The f32 GEMMs run at the FMA
// units' rate, a sixteenth of AMX's on the AMX Xeon.
bool bf16_gemms() {
  static const bool on =
      KB_ATTN == 1 && KB_GEMM == 1 && isa::best_isa(isa::Isa::kAmx) == isa::Isa::kAmx;
  return on;
}

// [cq | kv] = x [q_down | kv_down] (cqkv, T x wdw); Wq' (ql x H*dk): per head [Wq_nope_h Wk_h^T |
// Wq_rope_h] scaled by `scale`; q' = cq Wq' (T x H*dk, rows t*H + h of width dk). f32 operands,
// widened from bf16 once.
void project_f32(const kb_tensor* in, const Shape& s, Scratch& sc, const RowOps& row_ops,
                 float scale, float* cqkv, float* wq, float* q) {
  const int64_t T = s.tokens(), H = s.heads, E = s.emb, ql = s.ql, kvl = s.kvl, rope = s.rope;
  const int64_t dk = s.dk(), kvw = kvl + rope, wdw = ql + kvw, qin = s.qk_in();
  float* xf = sized(sc.x, T * E);
  float* wd = sized(sc.wd, E * wdw);
  float* qupf = sized(sc.qup, ql * H * qin);
  float* kupf = sized(sc.kup, kvl * H * s.nope);
  row_ops.widen(static_cast<const uint16_t*>(in[0].data), E, xf, E, T, E);
  row_ops.widen(static_cast<const uint16_t*>(in[1].data), ql, wd, wdw, E, ql);
  row_ops.widen(static_cast<const uint16_t*>(in[3].data), kvw, wd + ql, wdw, E, kvw);
  row_ops.widen(static_cast<const uint16_t*>(in[2].data), H * qin, qupf, H * qin, ql, H * qin);
  row_ops.widen(static_cast<const uint16_t*>(in[4].data), H * s.nope, kupf, H * s.nope, kvl,
                H * s.nope);
  sgemm(T, wdw, E, 1.0f, xf, E, wd, wdw, false, cqkv, wdw);
  sgemm_batch(H, ql, kvl, s.nope, scale, qupf, H * qin, qin, kupf, H * s.nope, s.nope, true, wq,
              H * dk, dk);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t p = 0; p < ql; ++p) {
      const float* src = qupf + p * H * qin + h * qin + s.nope;
      float* dst = wq + p * H * dk + h * dk + kvl;
      for (int64_t i = 0; i < rope; ++i) dst[i] = src[i] * scale;
    }
  sgemm(T, H * dk, ql, 1.0f, cqkv, wdw, wq, H * dk, false, q, H * dk);
}

// RoPE on `count` bf16 vectors of width 2*half (`stride` apart) at one position: widened into
// `rows` (count x 2*half f32), rotated, rounded back, as the original rotates its bf16 q.
void rope_bf16(const RowOps& row_ops, uint16_t* v, int64_t count, int64_t stride, int64_t half,
               const float* cs, const float* sn, float* rows) {
  const int64_t width = 2 * half;
  row_ops.widen(v, stride, rows, width, count, width);
  row_ops.rope(rows, count, width, half, cs, sn);
  for (int64_t k = 0; k < count; ++k) row_ops.narrow(rows + k * width, v + k * stride, width);
}

// The same on bf16 operands with f32 sums, each GEMM rounding its result to bf16 in its store: cq
// and Wq' (the original rounds cq too), q' = cq Wq' into qb and [latent, k_rope] into kvb, both
// before RoPE as in the original. Scale 1: the flash driver applies the score scale.
bool project_bf16(const kb_tensor* in, const Shape& s, Scratch& sc, uint16_t* kvb, uint16_t* qb,
                  int threads) {
  const int64_t T = s.tokens(), H = s.heads, E = s.emb, ql = s.ql, kvl = s.kvl, rope = s.rope;
  const int64_t dk = s.dk(), kvw = kvl + rope, qin = s.qk_in();
  const auto* x = static_cast<const uint16_t*>(in[0].data);
  const auto* q_up = static_cast<const uint16_t*>(in[2].data);
  uint16_t* wqb = sized(sc.wqb, ql * H * dk);
  uint16_t* cqb = sized(sc.cqb, T * ql);
  gemm_onednn(H, ql, kvl, s.nope, 1.0f, q_up, Dt::bf16, H * qin, qin, in[4].data, Dt::bf16,
              H * s.nope, s.nope, true, wqb, Dt::bf16, H * dk, dk);
  for (int64_t p = 0; p < ql; ++p)
    for (int64_t h = 0; h < H; ++h)  // the rope columns are q_up's own bf16 values
      std::memcpy(wqb + p * H * dk + h * dk + kvl, q_up + p * H * qin + h * qin + s.nope,
                  static_cast<size_t>(rope) * sizeof(uint16_t));
  if (KB_TILE_GEMM) {
    const auto* q_down = static_cast<const uint16_t*>(in[1].data);
    const auto* kv_down = static_cast<const uint16_t*>(in[3].data);
    const blocked_gemm::Gemm down[2] = {{x, E, q_down, ql, cqb, ql, T, E, ql},
                                        {x, E, kv_down, kvw, kvb, kvw, T, E, kvw}};
    const blocked_gemm::Gemm up{cqb, ql, wqb, H * dk, qb, H * dk, T, ql, H * dk};
    return blocked_gemm::gemm_amx(down, 2, kAmxBlocking, threads) &&
           blocked_gemm::gemm_amx(&up, 1, kAmxBlocking, threads);
  }
  gemm_onednn(1, T, ql, E, 1.0f, x, Dt::bf16, E, 0, in[1].data, Dt::bf16, ql, 0, false, cqb,
              Dt::bf16, ql, 0);
  gemm_onednn(1, T, kvw, E, 1.0f, x, Dt::bf16, E, 0, in[3].data, Dt::bf16, kvw, 0, false, kvb,
              Dt::bf16, kvw, 0);
  gemm_onednn(1, T, H * dk, ql, 1.0f, cqb, Dt::bf16, ql, 0, wqb, Dt::bf16, H * dk, 0, false, qb,
              Dt::bf16, H * dk, 0);
  return true;
}

int run(const kb_tensor* in, kb_tensor* out, const Shape& s, int threads) {
  static const RowOps row_ops = select_row_ops();
  static Scratch sc;
  const int64_t T = s.tokens(), H = s.heads, E = s.emb, ql = s.ql, kvl = s.kvl, rope = s.rope;
  const int64_t dk = s.dk(), kvw = kvl + rope, wdw = ql + kvw, qin = s.qk_in();
  const auto* v_up = static_cast<const uint16_t*>(in[5].data);
  const auto* o_proj = static_cast<const uint16_t*>(in[6].data);

  // The GEMM path (ATTN 0) scales Wq' by D^-0.5 log2 e (D the original score width nope + rope),
  // so that its softmax runs on exp2 and the scale is free; the flash driver applies the scale
  // itself.
  const double score_scale = 1.0 / std::sqrt(static_cast<double>(qin));
  // On the bf16 path q' and [latent, k_rope] are bf16 (rounded by their GEMMs and RoPE'd in
  // bf16, as the original does); on the f32 path both are f32 until the attention.
  const bool bf16 = bf16_gemms();
  uint16_t* qb = sized(sc.qb, T * H * dk);
  uint16_t* kvb = sized(sc.kvb, T * kvw);
  float* cqkv = bf16 ? nullptr : sized(sc.cqkv, T * wdw);
  float* q = bf16 ? nullptr : sized(sc.q, T * H * dk);
  if (bf16) {
    if (!project_bf16(in, s, sc, kvb, qb, threads)) return 1;
  } else {
    project_f32(in, s, sc, row_ops,
                KB_ATTN ? 1.0f : static_cast<float>(score_scale / std::log(2.0)), cqkv,
                sized(sc.wq, ql * H * dk), q);
  }

  // RoPE tables: cos, sin of pos * theta^(-2i / rope), rounded to bf16 as the original casts
  // them to x.dtype.
  const int64_t half = rope / 2;
  float* cs = sized(sc.cs, s.seq * half);
  float* sn = sized(sc.sn, s.seq * half);
  for (int64_t i = 0; i < half; ++i) {
    const double freq =
        1.0 / std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(rope));
    for (int64_t pos = 0; pos < s.seq; ++pos) {
      const double angle = static_cast<double>(pos) * freq;
      cs[pos * half + i] = kb_bf16_to_f32(kb_f32_to_bf16(static_cast<float>(std::cos(angle))));
      sn[pos * half + i] = kb_bf16_to_f32(kb_f32_to_bf16(static_cast<float>(std::sin(angle))));
    }
  }
  float* rope_rows = bf16 ? sized(sc.rope_rows, H * rope) : nullptr;  // rope_bf16's scratch
  for (int64_t t = 0; t < T; ++t) {
    const int64_t pos = t % s.seq;
    if (bf16) {
      rope_bf16(row_ops, qb + t * H * dk + kvl, H, dk, half, cs + pos * half, sn + pos * half,
                rope_rows);
      rope_bf16(row_ops, kvb + t * kvw + kvl, 1, rope, half, cs + pos * half, sn + pos * half,
                rope_rows);
    } else {
      row_ops.rope(q + t * H * dk + kvl, H, dk, half, cs + pos * half, sn + pos * half);
      row_ops.rope(cqkv + t * wdw + ql + kvl, 1, 0, half, cs + pos * half, sn + pos * half);
    }
  }

  // Attention: keys [latent, k_rope] and values latent, both in kvb (ld kvw; the f32 path rounds
  // them from cqkv's kv part here).
  float* y = sized(sc.y, T * H * kvl);
  if (KB_ATTN) {
    uint16_t* yb = sized(sc.yb, T * H * kvl);
    if (!bf16) {
      row_ops.narrow(q, qb, T * H * dk);
      for (int64_t t = 0; t < T; ++t) row_ops.narrow(cqkv + t * wdw + ql, kvb + t * kvw, kvw);
    }
    std::vector<flash::KvHead> kv(static_cast<size_t>(s.batch));
    std::vector<flash::QueryItem> items;
    items.reserve(static_cast<size_t>(s.batch * H));
    for (int64_t b = 0; b < s.batch; ++b) {
      const uint16_t* base = kvb + b * s.seq * kvw;
      kv[b] = {{base, kvw}, {base, kvw}, s.seq};
      for (int64_t h = 0; h < H; ++h)
        items.push_back({qb + (b * s.seq * H + h) * dk, H * dk, yb + (b * s.seq * H + h) * kvl,
                         H * kvl, s.seq, 0, b});
    }
    const flash::Problem fp{dk,        kvl,          static_cast<float>(score_scale),
                            kv.data(), items.data(), static_cast<int64_t>(items.size())};
    if (flash::attend(fp, threads) != 0) return 1;
    if (!bf16) row_ops.widen(yb, T * H * kvl, y, T * H * kvl, 1, T * H * kvl);
  } else {
    const int64_t bq = std::min<int64_t>(KB_AQ, s.seq);
    float* scores = sized(sc.scores, bq * H * s.seq);
    for (int64_t b = 0; b < s.batch; ++b) {
      const float* kv = cqkv + b * s.seq * wdw + ql;
      for (int64_t i0 = 0; i0 < s.seq; i0 += bq) {
        const int64_t rows = std::min(bq, s.seq - i0) * H;
        const int64_t keys = std::min(s.seq, i0 + bq);  // the causal prefix of this block
        const float* qblk = q + (b * s.seq + i0) * H * dk;
        sgemm(rows, keys, dk, 1.0f, qblk, dk, kv, wdw, true, scores, keys);
        row_ops.softmax(scores, keys, rows, keys, H, i0 + 1);
        sgemm(rows, kvl, keys, 1.0f, scores, keys, kv, wdw, false, y + (b * s.seq + i0) * H * kvl,
              kvl);
      }
    }
  }

  // Wvo (H*kvl x E): per head Wv_h Wo_h; out = bf16(Y Wvo).
  auto* dst = static_cast<uint16_t*>(out[0].data);
  if (bf16) {
    uint16_t* wvob = sized(sc.wvob, H * kvl * E);  // rounded in its GEMM's store
    if (KB_TILE_GEMM) {
      std::vector<blocked_gemm::Gemm> heads(static_cast<size_t>(H));
      for (int64_t h = 0; h < H; ++h)
        heads[static_cast<size_t>(h)] = {v_up + h * s.vd,
                                         H * s.vd,
                                         o_proj + h * s.vd * E,
                                         E,
                                         wvob + h * kvl * E,
                                         E,
                                         kvl,
                                         s.vd,
                                         E};
      const blocked_gemm::Gemm g{sc.yb.data(), H * kvl, wvob, E, dst, E, T, H * kvl, E};
      if (!blocked_gemm::gemm_amx(heads.data(), H, kAmxBlocking, threads) ||
          !blocked_gemm::gemm_amx(&g, 1, kAmxBlocking, threads))
        return 1;
      return 0;
    }
    gemm_onednn(H, kvl, E, s.vd, 1.0f, v_up, Dt::bf16, H * s.vd, s.vd, o_proj, Dt::bf16, E,
                s.vd * E, false, wvob, Dt::bf16, E, kvl * E);
    gemm_onednn(1, T, E, H * kvl, 1.0f, sc.yb.data(), Dt::bf16, H * kvl, 0, wvob, Dt::bf16, E, 0,
                false, dst, Dt::bf16, E, 0);
    return 0;
  }
  float* wvo = sized(sc.wvo, H * kvl * E);
  float* vupf = sized(sc.vup, kvl * H * s.vd);
  float* of = sized(sc.oproj, H * s.vd * E);
  row_ops.widen(v_up, H * s.vd, vupf, H * s.vd, kvl, H * s.vd);
  row_ops.widen(o_proj, E, of, E, H * s.vd, E);
  sgemm_batch(H, kvl, E, s.vd, 1.0f, vupf, H * s.vd, s.vd, of, E, s.vd * E, false, wvo, E, kvl * E);
  float* outf = sized(sc.out, T * E);
  sgemm(T, E, H * kvl, 1.0f, y, H * kvl, wvo, E, false, outf, E);
  row_ops.narrow(outf, dst, T * E);
  return 0;
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  // OpenBLAS and oneDNN take their thread counts from OPENBLAS_NUM_THREADS and OpenMP, both set
  // to cfg->num_threads.
  Shape s{};
  if (!shape_of(inputs, num_inputs, outputs, num_outputs, s)) return 1;
  try {
    return run(inputs, outputs, s, cfg->num_threads > 0 ? cfg->num_threads : 1);
  } catch (...) {  // scratch allocation failed (or oneDNN failed beyond its fallback)
    return 1;
  }
}
