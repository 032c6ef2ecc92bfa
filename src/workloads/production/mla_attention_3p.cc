// 3p_MLA_Attention: multi-head latent attention of DeepSeek-V3-671B (extracted from MaxText).
//
// Operator  q = (x @ q_down) @ q_up, split per head into q_nope (nope) and q_rope (rope);
//           kv = x @ kv_down, split into k_latent (kvl) and k_rope_raw (rope, shared by all heads);
//           k_nope = k_latent @ k_up, v = k_latent @ v_up (per head nope and vd wide);
//           q_rope, k_rope = RoPE(q_rope), RoPE(k_rope_raw) at position s: half-split rotation
//             (x1, x2 = first and second half; [x1 c - x2 s, x1 s + x2 c]) with c, s = cos, sin of
//             s * theta^(-2i / rope), i < rope / 2, theta = 10000, cast to bf16 (x.dtype);
//           per head: scores = [q_nope, q_rope] . [k_nope, k_rope] * (nope + rope)^-0.5, causal
//             (where(tril, scores, -1e9)), softmax over keys, @ v;
//           out = heads concatenated (B, S, H * vd) @ o_proj.
// Inputs    x        bf16 (B, S, E)            normal
//           q_down   bf16 (E, ql)              normal*0.02 (see Deviations)
//           q_up     bf16 (ql, H*(nope+rope))  normal*0.02
//           kv_down  bf16 (E, kvl+rope)        normal*0.02
//           k_up     bf16 (kvl, H*nope)        normal*0.02
//           v_up     bf16 (kvl, H*vd)          normal*0.02
//           o_proj   bf16 (H*vd, E)            normal*0.02
// Output    out      bf16 (B, S, E)
// FLOPs     2*B*S*(E*ql + ql*H*(nope+rope) + E*(kvl+rope) + kvl*H*nope + kvl*H*vd + H*vd*E)
//           + 4*B*H*S*S*(nope+rope) (the masked half counted); 4,714,800,349,184 at full size
//           (B=4, S=2048, E=7168, H=128, ql=1536, kvl=512, nope=128, rope=64, vd=128).
// Essential the projections + 2*B*H*(qk + vd)*S(S+1)/2 (visible pairs): the roofline's floor
// Character compute-bound: six projection GEMMs (65% of the FLOPs) and per-head causal attention
//           with head_dim 192 for scores and 128 for values.
// Deviations
//   - The cpu preset is (B, S, E, H, ql, kvl) = (2, 256, 896, 16, 192, 64) with the full head dims
//     (128, 64, 128): E, H, the LoRA ranks and S all 1/8 of the original, so the ranks keep their
//     proportions to E and the attention / projection FLOP ratio (0.54) is the original's.
//   - Weight standard deviations are 0.02 * sqrt(full fan-in / fan-in) (exactly 0.02 at full size):
//     with 0.02 at 1/8 of the fan-in, every activation shrinks by sqrt(8) per GEMM and the scaled
//     scores' spread falls from ~1.5 (full) to ~0.06, a uniform attention that ignores q and k. The
//     rescaling keeps every activation, and the scores' contrast, at the full size's magnitude.
//   - RoPE is the half-split rotation the spec names (JAXBench commit 5d39d1a; the stored
//   baseline.py
//     before it rotated interleaved pairs). The cos/sin tables are bf16 in every implementation, as
//     the original casts them to x.dtype.
//   - The baseline keeps the scores f32 where the original rounds the score einsum and its scaling
//   to
//     bf16 and runs the softmax in bf16 (the faithful bf16 program does that), and applies RoPE in
//     one f32 pass rounding once.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "core/tensor.h"
#include "ops/attention.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/rows.h"
#include "ops/spread_calls.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/bf16_softmax.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr double kMaskedScore = -1e9;  // the original's where(tril, scores, -1e9)

struct Shape {
  std::int64_t batch, seq_len, emb_dim, num_heads, q_lora_rank, kv_lora_rank, nope, rope, v_dim;
  std::int64_t qk_dim() const { return nope + rope; }
  std::int64_t tokens() const { return batch * seq_len; }
};

constexpr double kRopeTheta = 10000;
constexpr Shape kFullShape = {4, 2048, 7168, 128, 1536, 512, 128, 64, 128};

constexpr Presets<Shape> kPresets = {
    .smoke = {2, 13, 45, 3, 19, 11, 7, 6, 5},  // odd extents; rope even (its halves rotate)
    .cpu = {2, 256, 896, 16, 192, 64, 128, 64, 128},
    .full = kFullShape,
};

// 0.02 at the full fan-in, scaled so that a GEMM of this fan-in keeps the full size's magnitudes.
InitRule weight_init(std::int64_t fan_in, std::int64_t full_fan_in) {
  return InitRule::normal(
      0.02 * std::sqrt(static_cast<double>(full_fan_in) / static_cast<double>(fan_in)));
}

Problem make_problem(Size size) {
  const Shape s = kPresets.at(size);
  const Shape& f = kFullShape;
  const std::int64_t h = s.num_heads;
  Problem problem;
  problem.config = {{"batch", s.batch},
                    {"seq_len", s.seq_len},
                    {"emb_dim", s.emb_dim},
                    {"num_heads", s.num_heads},
                    {"q_lora_rank", s.q_lora_rank},
                    {"kv_lora_rank", s.kv_lora_rank},
                    {"qk_nope_head_dim", s.nope},
                    {"qk_rope_head_dim", s.rope},
                    {"v_head_dim", s.v_dim},
                    {"rope_theta", static_cast<std::int64_t>(kRopeTheta)}};
  problem.inputs = {
      {{"x", KB_BF16, {s.batch, s.seq_len, s.emb_dim}}, InitRule::normal()},
      {{"q_down", KB_BF16, {s.emb_dim, s.q_lora_rank}}, weight_init(s.emb_dim, f.emb_dim)},
      {{"q_up", KB_BF16, {s.q_lora_rank, h * s.qk_dim()}},
       weight_init(s.q_lora_rank, f.q_lora_rank)},
      {{"kv_down", KB_BF16, {s.emb_dim, s.kv_lora_rank + s.rope}},
       weight_init(s.emb_dim, f.emb_dim)},
      {{"k_up", KB_BF16, {s.kv_lora_rank, h * s.nope}},
       weight_init(s.kv_lora_rank, f.kv_lora_rank)},
      {{"v_up", KB_BF16, {s.kv_lora_rank, h * s.v_dim}},
       weight_init(s.kv_lora_rank, f.kv_lora_rank)},
      {{"o_proj", KB_BF16, {h * s.v_dim, s.emb_dim}},
       weight_init(h * s.v_dim, f.num_heads * f.v_dim)},
  };
  problem.outputs = {{"out", KB_BF16, {s.batch, s.seq_len, s.emb_dim}}};
  const double proj =
      2.0 * static_cast<double>(s.tokens()) *
      static_cast<double>(s.emb_dim * s.q_lora_rank + s.q_lora_rank * h * s.qk_dim() +
                          s.emb_dim * (s.kv_lora_rank + s.rope) + s.kv_lora_rank * h * s.nope +
                          s.kv_lora_rank * h * s.v_dim + h * s.v_dim * s.emb_dim);
  const double attn = 4.0 * static_cast<double>(s.batch * h) *
                      static_cast<double>(s.seq_len * s.seq_len) * static_cast<double>(s.qk_dim());
  problem.flops = proj + attn;
  // Scores over qk_dim and P @ V over v_dim (the spec counts qk_dim for both), visible pairs only.
  problem.essential_flops = proj + 2.0 * static_cast<double>(s.batch * h) *
                                       ops::causal_pairs(s.seq_len, s.seq_len) *
                                       static_cast<double>(s.qk_dim() + s.v_dim);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The shape of a call whose tensors match the signature above (any float output dtype), or nullopt.
// The head split follows from the weights: kvl = k_up rows, rope = kv_down width - kvl,
// H = (q_up width - k_up width) / rope, nope = k_up width / H, vd = v_up width / H.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 7 || num_outputs != 1 || in[0].rank != 3) return std::nullopt;
  for (int w = 1; w < 7; ++w)
    if (in[w].rank != 2) return std::nullopt;
  Shape s{};
  s.batch = in[0].shape[0];
  s.seq_len = in[0].shape[1];
  s.emb_dim = in[0].shape[2];
  s.q_lora_rank = in[1].shape[1];
  s.kv_lora_rank = in[4].shape[0];
  s.rope = in[3].shape[1] - s.kv_lora_rank;
  if (s.rope <= 0 || s.rope % 2 != 0 || (in[2].shape[1] - in[4].shape[1]) % s.rope != 0)
    return std::nullopt;
  s.num_heads = (in[2].shape[1] - in[4].shape[1]) / s.rope;
  if (s.num_heads <= 0 || in[4].shape[1] % s.num_heads != 0 || in[5].shape[1] % s.num_heads != 0)
    return std::nullopt;
  s.nope = in[4].shape[1] / s.num_heads;
  s.v_dim = in[5].shape[1] / s.num_heads;
  const std::int64_t h = s.num_heads;
  if (s.batch <= 0 || s.seq_len <= 0 || s.nope <= 0 || s.v_dim <= 0 ||
      !ops::matches(in[0], KB_BF16, {s.batch, s.seq_len, s.emb_dim}) ||
      !ops::matches(in[1], KB_BF16, {s.emb_dim, s.q_lora_rank}) ||
      !ops::matches(in[2], KB_BF16, {s.q_lora_rank, h * s.qk_dim()}) ||
      !ops::matches(in[3], KB_BF16, {s.emb_dim, s.kv_lora_rank + s.rope}) ||
      !ops::matches(in[4], KB_BF16, {s.kv_lora_rank, h * s.nope}) ||
      !ops::matches(in[5], KB_BF16, {s.kv_lora_rank, h * s.v_dim}) ||
      !ops::matches(in[6], KB_BF16, {h * s.v_dim, s.emb_dim}) ||
      !ops::is_float_output(out[0], {s.batch, s.seq_len, s.emb_dim}))
    return std::nullopt;
  return s;
}

// cos and sin of position * theta^(-2i / rope), i < rope / 2, rounded to bf16 as the original
// casts them to x.dtype: (seq_len, rope / 2) each.
struct RopeTables {
  std::vector<float> cos, sin;
};

RopeTables rope_tables(const Shape& s) {
  const std::int64_t half = s.rope / 2;
  RopeTables t;
  t.cos.resize(static_cast<std::size_t>(s.seq_len * half));
  t.sin.resize(t.cos.size());
  for (std::int64_t pos = 0; pos < s.seq_len; ++pos)
    for (std::int64_t i = 0; i < half; ++i) {
      const double freq =
          1.0 / std::pow(kRopeTheta, static_cast<double>(2 * i) / static_cast<double>(s.rope));
      const double angle = static_cast<double>(pos) * freq;
      t.cos[pos * half + i] = round_to_bf16(static_cast<float>(std::cos(angle)));
      t.sin[pos * half + i] = round_to_bf16(static_cast<float>(std::sin(angle)));
    }
  return t;
}

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const Shape& s = shape;
  const std::int64_t tokens = s.tokens(), h = s.num_heads, half = s.rope / 2;
  const auto value = [&](int input, std::int64_t i) {
    return static_cast<double>(bf16_to_f32(static_cast<const bf16_t*>(in[input].data)[i]));
  };
  // C (rows x n) = A (rows x k, read by `a`) @ weight input `w` (k x n), in double.
  const auto project = [&](const std::vector<double>& a, std::int64_t a_ld, std::int64_t k, int w,
                           std::int64_t n) {
    std::vector<double> c(static_cast<std::size_t>(tokens * n), 0.0);
    for (std::int64_t t = 0; t < tokens; ++t)
      for (std::int64_t p = 0; p < k; ++p) {
        const double a_tp = a[t * a_ld + p];
        for (std::int64_t j = 0; j < n; ++j) c[t * n + j] += a_tp * value(w, p * n + j);
      }
    return c;
  };
  std::vector<double> x(static_cast<std::size_t>(tokens * s.emb_dim));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = value(0, static_cast<std::int64_t>(i));
  const std::int64_t kv_width = s.kv_lora_rank + s.rope;
  const std::vector<double> cq = project(x, s.emb_dim, s.emb_dim, 1, s.q_lora_rank);
  std::vector<double> q = project(cq, s.q_lora_rank, s.q_lora_rank, 2, h * s.qk_dim());
  std::vector<double> kv = project(x, s.emb_dim, s.emb_dim, 3, kv_width);
  const std::vector<double> k_nope = project(kv, kv_width, s.kv_lora_rank, 4, h * s.nope);
  const std::vector<double> v = project(kv, kv_width, s.kv_lora_rank, 5, h * s.v_dim);

  const RopeTables tables = rope_tables(s);
  const auto rotate = [&](double* r, std::int64_t pos) {
    for (std::int64_t i = 0; i < half; ++i) {
      const double c = tables.cos[pos * half + i], sn = tables.sin[pos * half + i];
      const double x1 = r[i], x2 = r[i + half];
      r[i] = x1 * c - x2 * sn;
      r[i + half] = x1 * sn + x2 * c;
    }
  };
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t pos = t % s.seq_len;
    for (std::int64_t head = 0; head < h; ++head)
      rotate(&q[(t * h + head) * s.qk_dim() + s.nope], pos);
    rotate(&kv[t * kv_width + s.kv_lora_rank], pos);
  }

  const double scale = 1.0 / std::sqrt(static_cast<double>(s.qk_dim()));
  std::vector<double> attn(static_cast<std::size_t>(tokens * h * s.v_dim), 0.0);
  std::vector<double> weights(static_cast<std::size_t>(s.seq_len));
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t head = 0; head < h; ++head)
      for (std::int64_t i = 0; i < s.seq_len; ++i) {
        const double* qi = &q[((b * s.seq_len + i) * h + head) * s.qk_dim()];
        double max_score = -INFINITY;
        for (std::int64_t j = 0; j <= i; ++j) {  // keys j > i: exp(-1e9 - max) = 0
          const std::int64_t tj = b * s.seq_len + j;
          double dot = 0;
          for (std::int64_t d = 0; d < s.nope; ++d)
            dot += qi[d] * k_nope[(tj * h + head) * s.nope + d];
          for (std::int64_t d = 0; d < s.rope; ++d)
            dot += qi[s.nope + d] * kv[tj * kv_width + s.kv_lora_rank + d];
          weights[j] = dot * scale;
          max_score = std::max(max_score, weights[j]);
        }
        double sum = 0;
        for (std::int64_t j = 0; j <= i; ++j) sum += weights[j] = std::exp(weights[j] - max_score);
        double* o = &attn[((b * s.seq_len + i) * h + head) * s.v_dim];
        for (std::int64_t j = 0; j <= i; ++j)
          for (std::int64_t d = 0; d < s.v_dim; ++d)
            o[d] += weights[j] / sum * v[((b * s.seq_len + j) * h + head) * s.v_dim + d];
      }
  const std::vector<double> y = project(attn, h * s.v_dim, h * s.v_dim, 6, s.emb_dim);
  auto* o = static_cast<float*>(out[0].data);
  for (std::size_t i = 0; i < y.size(); ++i) o[i] = static_cast<float>(y[i]);
  return 0;
}

// A scratch activation with typed access to its blocks.
class Activation {
 public:
  Activation(kb_dtype dtype, std::int64_t rows, std::int64_t cols)
      : m_(dtype, rows, cols), dtype_(dtype), cols_(cols) {}
  char* at(std::int64_t r, std::int64_t c) {
    return static_cast<char*>(m_.row(r)) + static_cast<std::size_t>(c) * dtype_size(dtype_);
  }
  ops::Matrix block(std::int64_t r, std::int64_t c, std::int64_t rows, std::int64_t cols) {
    return {at(r, c), dtype_, rows, cols, cols_};
  }
  ops::MutableMatrix out_block(std::int64_t r, std::int64_t c, std::int64_t rows,
                               std::int64_t cols) {
    return {at(r, c), dtype_, rows, cols, cols_};
  }
  float get(std::int64_t r, std::int64_t c) {
    return dtype_ == KB_F32 ? *reinterpret_cast<float*>(at(r, c))
                            : bf16_to_f32(*reinterpret_cast<bf16_t*>(at(r, c)));
  }
  void set(std::int64_t r, std::int64_t c, float value) {  // rounds where the activation is bf16
    if (dtype_ == KB_F32)
      *reinterpret_cast<float*>(at(r, c)) = value;
    else
      *reinterpret_cast<bf16_t*>(at(r, c)) = f32_to_bf16(value);
  }
  kb_dtype dtype() const { return dtype_; }

 private:
  ops::ScratchMatrix m_;
  kb_dtype dtype_;
  std::int64_t cols_;
};

// The projections both programs share, each GEMM writing `dtype` (bf16 rounds once per GEMM, as
// the original's bf16 dots do; f32 for the oracle): q (T, H*(nope+rope)), kv (T, kvl+rope), and the
// keys k (T, H*(nope+rope)) whose per-head nope part the k_up GEMM writes in place (the rope part
// is filled by the caller), and v (T, H*vd).
struct Projections {
  Activation q, kv, k, v;
  Projections(const Shape& s, kb_dtype dtype, const kb_tensor* in)
      : q(dtype, s.tokens(), s.num_heads * s.qk_dim()),
        kv(dtype, s.tokens(), s.kv_lora_rank + s.rope),
        k(dtype, s.tokens(), s.num_heads * s.qk_dim()),
        v(dtype, s.tokens(), s.num_heads * s.v_dim) {
    const std::int64_t tokens = s.tokens();
    const ops::Matrix x = ops::matrix_of(in[0]);
    Activation cq(dtype, tokens, s.q_lora_rank);
    ops::gemm(x, ops::matrix_of(in[1]), false, cq.out_block(0, 0, tokens, s.q_lora_rank));
    ops::gemm(cq.block(0, 0, tokens, s.q_lora_rank), ops::matrix_of(in[2]), false,
              q.out_block(0, 0, tokens, s.num_heads * s.qk_dim()));
    ops::gemm(x, ops::matrix_of(in[3]), false, kv.out_block(0, 0, tokens, s.kv_lora_rank + s.rope));
    const ops::Matrix latent = kv.block(0, 0, tokens, s.kv_lora_rank);
    const ops::Matrix k_up = ops::matrix_of(in[4]);
    for (std::int64_t head = 0; head < s.num_heads; ++head)
      ops::gemm(latent,
                {static_cast<const bf16_t*>(k_up.data) + head * s.nope, KB_BF16, s.kv_lora_rank,
                 s.nope, k_up.ld},
                false, k.out_block(0, head * s.qk_dim(), tokens, s.nope));
    ops::gemm(latent, ops::matrix_of(in[5]), false,
              v.out_block(0, 0, tokens, s.num_heads * s.v_dim));
  }
};

// Rotates act[row, col : col + rope] by position pos into dst[row, dst_col : ...]: one f32 pass
// rounding once on store (per_op_rounding false) or rounding each product, difference and sum to
// bf16 as the original's bf16 elementwise ops do (per_op_rounding true).
void rotate(Activation& src, std::int64_t row, std::int64_t col, Activation& dst,
            std::int64_t dst_row, std::int64_t dst_col, std::int64_t pos, const Shape& s,
            const RopeTables& tables, bool per_op_rounding) {
  const std::int64_t half = s.rope / 2;
  const auto r = [per_op_rounding](float x) { return per_op_rounding ? round_to_bf16(x) : x; };
  for (std::int64_t i = 0; i < half; ++i) {
    const float c = tables.cos[pos * half + i], sn = tables.sin[pos * half + i];
    const float x1 = src.get(row, col + i), x2 = src.get(row, col + i + half);
    dst.set(dst_row, dst_col + i, r(r(x1 * c) - r(x2 * sn)));
    dst.set(dst_row, dst_col + i + half, r(r(x1 * sn) + r(x2 * c)));
  }
}

// RoPE on every head's q_rope in place and on each token's shared k_rope, written into every
// head's rope slot of k.
void apply_rope(const Shape& s, Projections& p, bool per_op_rounding) {
  const RopeTables tables = rope_tables(s);
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < s.tokens(); ++t) {
    const std::int64_t pos = t % s.seq_len;
    for (std::int64_t head = 0; head < s.num_heads; ++head)
      rotate(p.q, t, head * s.qk_dim() + s.nope, p.q, t, head * s.qk_dim() + s.nope, pos, s, tables,
             per_op_rounding);
    rotate(p.kv, t, s.kv_lora_rank, p.k, t, s.nope, pos, s, tables, per_op_rounding);
    const std::size_t bytes = static_cast<std::size_t>(s.rope) * dtype_size(p.k.dtype());
    for (std::int64_t head = 1; head < s.num_heads; ++head)
      std::memcpy(p.k.at(t, head * s.qk_dim() + s.nope), p.k.at(t, s.nope), bytes);
  }
}

// What a fusing compiler emits: the six projection GEMMs (the k_up GEMM per head writing straight
// into the concatenated [k_nope, k_rope] keys), one RoPE pass, then per (batch, head) a GEMM for
// the S x S scores with the scale fused (f32, as an einsum fused into its softmax keeps them), a
// causal softmax pass per row, a GEMM with v writing the head's columns of the attention output,
// and the o_proj GEMM. Activations are bf16 in the timed run and f32 in the oracle.
int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const Shape& s = shape;
  const kb_dtype dtype = out[0].dtype;
  Projections p(s, dtype, in);
  apply_rope(s, p, /*per_op_rounding=*/false);

  const std::int64_t n = s.seq_len;
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.qk_dim())));
  Activation attn(dtype, s.tokens(), s.num_heads * s.v_dim);
  // One thread's scores and probabilities.
  struct HeadScratch {
    HeadScratch(kb_dtype dtype, std::int64_t n)
        : scores(KB_F32, n, n), probabilities(dtype, dtype == KB_BF16 ? n : 0, n) {}
    ops::ScratchMatrix scores;
    Activation probabilities;
  };
  std::vector<std::optional<HeadScratch>> scratch(static_cast<std::size_t>(omp_get_max_threads()));
  // Made here, not on the threads: see paged_attention_6p.cc (a buffer freed by another thread
  // than the one that made it is page-faulted afresh on every call).
  for (std::optional<HeadScratch>& buffers : scratch) buffers.emplace(dtype, n);
  // The (batch, head) pairs are independent and their GEMMs a few hundred rows: spread over the
  // threads, one each.
  const std::int64_t pairs = s.batch * s.num_heads;
  ops::spread_library_calls(
      std::vector<double>(static_cast<std::size_t>(pairs), 1.0), [&](std::size_t pair) {
        const std::int64_t b = static_cast<std::int64_t>(pair) / s.num_heads;
        const std::int64_t head = static_cast<std::int64_t>(pair) % s.num_heads;
        std::optional<HeadScratch>& mine = scratch[static_cast<std::size_t>(omp_get_thread_num())];
        ops::ScratchMatrix& scores = mine->scores;
        Activation& probabilities = mine->probabilities;
        const std::int64_t row0 = b * n;
        ops::gemm(p.q.block(row0, head * s.qk_dim(), n, s.qk_dim()),
                  p.k.block(row0, head * s.qk_dim(), n, s.qk_dim()), /*b_transposed=*/true,
                  scores.out(), {.alpha = scale});
        for (std::int64_t i = 0; i < n; ++i) {
          auto* row = static_cast<float*>(scores.row(i));
          // exp(-1e9 - max) is exactly 0 in f32: the softmax over the causal prefix then zeros.
          const auto visible = static_cast<std::size_t>(i + 1);
          if (dtype == KB_BF16)
            ops::prefix_softmax(row, visible, static_cast<std::size_t>(n),
                                reinterpret_cast<bf16_t*>(probabilities.at(i, 0)));
          else
            ops::prefix_softmax(row, visible, static_cast<std::size_t>(n));
        }
        ops::gemm(dtype == KB_BF16 ? probabilities.block(0, 0, n, n) : scores.in(),
                  p.v.block(row0, head * s.v_dim, n, s.v_dim), false,
                  attn.out_block(row0, head * s.v_dim, n, s.v_dim));
      });
  ops::gemm(attn.block(0, 0, s.tokens(), s.num_heads * s.v_dim), ops::matrix_of(in[6]), false,
            ops::mutable_matrix_of(out[0]));
  return 0;
}

// The original's arithmetic in bf16: every dot rounds its output; RoPE rounds each product,
// difference and sum; the score einsum rounds, then its product with the bf16 scale; masked scores
// are bf16(-1e9); jax.nn.softmax in bf16 rounds x - max, exp and the division (the sum accumulates
// in f32, as jnp.sum upcasts bf16, and rounds); the value einsum and o_proj round their outputs.
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const Shape& s = shape;
  Projections p(s, KB_BF16, in);
  apply_rope(s, p, /*per_op_rounding=*/true);

  const std::int64_t n = s.seq_len;
  const float scale = round_to_bf16(static_cast<float>(std::pow(s.qk_dim(), -0.5)));
  const float masked = round_to_bf16(static_cast<float>(kMaskedScore));
  Activation attn(KB_BF16, s.tokens(), s.num_heads * s.v_dim);
  Activation scores(KB_BF16, n, n);
  std::vector<float> row(static_cast<std::size_t>(n));
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t head = 0; head < s.num_heads; ++head) {
      const std::int64_t row0 = b * n;
      ops::gemm(p.q.block(row0, head * s.qk_dim(), n, s.qk_dim()),
                p.k.block(row0, head * s.qk_dim(), n, s.qk_dim()), true,
                scores.out_block(0, 0, n, n));
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < n; ++j)
          row[j] = j <= i ? round_to_bf16(scores.get(i, j) * scale) : masked;
        bf16_softmax(row.data(), n);
        for (std::int64_t j = 0; j < n; ++j) scores.set(i, j, row[j]);
      }
      ops::gemm(scores.block(0, 0, n, n), p.v.block(row0, head * s.v_dim, n, s.v_dim), false,
                attn.out_block(row0, head * s.v_dim, n, s.v_dim));
    }
  ops::gemm(attn.block(0, 0, s.tokens(), s.num_heads * s.v_dim), ops::matrix_of(in[6]), false,
            ops::mutable_matrix_of(out[0]));
  return 0;
}

// Wider than JAXBench's allclose(1e-2, 1e-2) + rel-L2 1e-2, which the original's own bf16
// arithmetic fails: its raw scores reach |q.k| ~ 80 (scaled ~6), where a bf16 step is 0.5 (0.03
// after scaling), and x - max, exp and the division round again, so each softmax weight carries a
// ~1-3% error that a peaked attention does not average out. Measured for the faithful bf16 program
// (20 smoke, 3 cpu seeds): worst |diff| 0.047 (smoke, output RMS ~1.6) and 0.038 (cpu, RMS ~0.64),
// worst rel-L2 0.0066 (smoke) and 0.0085 (cpu). Bounds at ~2x those: atol 0.08, rel-L2 0.02; the
// closest degenerate (oracle + 5% noise) has rel-L2 0.05, 2.5x the bound. atol is 0.2, not 0.08:
// the per-element error is heavy-tailed, and over 800 smoke seeds (kbench validate --seeds 200,
// four base seeds) single elements erred by up to 0.131, beyond 0.08 and 0.12; the rel-L2 bound,
// which rejects every degenerate output, is unchanged.
constexpr Tolerance kTolerance = {.atol = 0.2, .rtol = 1e-2, .max_rel_l2 = 2e-2};

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kMlaAttention3p = with_programs<Programs>({
    .name = "3p_MLA_Attention",
    .model = "DeepSeek-V3-671B (extracted from MaxText)",
    .summary = "Multi-head latent attention: LoRA q/kv projections, RoPE, causal attention, o_proj",
    .problem = make_problem,
    .tolerance = kTolerance,
    .scaffold = scaffolds::k3p_MLA_Attention,
});

}  // namespace kbench
