// The quadratic form 15p (retention) and 16p (Mamba-2 SSD) share, one (batch, head) of bf16
// (B, H, S, D) tensors at a time: scores = (q k^T in f32) * decay with decay 0 above the diagonal,
// each row divided by a norm of its sum, out = scores @ v. The workloads differ in the decay and
// the norm only; the frames around them live here, so each file holds just those.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/bf16.h"
#include "kbench/kernel.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/rows.h"
#include "workloads/kit/bhsd.h"

namespace kbench::decayed_scores {

inline int threads_of(const kb_config* cfg) {
  return cfg != nullptr ? std::max(1, cfg->num_threads) : 1;
}

// The double reference, per (batch, head): `prepare_head(bh)`, then for each row i the scores
// (q_i . k_j) * decay(i, j) of the visible keys j <= i (the masked ones are the 0 the decay gives
// them) and out_i = (sum_j scores_j v_j) / norm_of(scores, i + 1), stored as f32.
template <class PrepareHead, class Decay, class NormOf>
int reference(const bhsd::Shape& shape, const kb_tensor* in, kb_tensor* out,
              PrepareHead prepare_head, Decay decay, NormOf norm_of) {
  const auto [batch, num_heads, seq_len, head_dim] = shape;
  std::vector<double> scores(static_cast<std::size_t>(seq_len));
  std::vector<double> acc(static_cast<std::size_t>(head_dim));
  for (std::int64_t bh = 0; bh < batch * num_heads; ++bh) {
    prepare_head(bh);
    const std::int64_t head_offset = bh * seq_len * head_dim;
    const auto* q = static_cast<const bf16_t*>(in[0].data) + head_offset;
    const auto* k = static_cast<const bf16_t*>(in[1].data) + head_offset;
    const auto* v = static_cast<const bf16_t*>(in[2].data) + head_offset;
    float* o = static_cast<float*>(out[0].data) + head_offset;
    for (std::int64_t i = 0; i < seq_len; ++i) {
      for (std::int64_t j = 0; j <= i; ++j) {
        double dot = 0;
        for (std::int64_t d = 0; d < head_dim; ++d)
          dot += static_cast<double>(bf16_to_f32(q[i * head_dim + d])) *
                 bf16_to_f32(k[j * head_dim + d]);
        scores[j] = dot * decay(i, j);
      }
      const double norm = norm_of(scores.data(), i + 1);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t j = 0; j <= i; ++j)
        for (std::int64_t d = 0; d < head_dim; ++d)
          acc[d] += scores[j] * bf16_to_f32(v[j * head_dim + d]);
      for (std::int64_t d = 0; d < head_dim; ++d)
        o[i * head_dim + d] = static_cast<float>(acc[d] / norm);
    }
  }
  return 0;
}

// What a fusing compiler emits, per (batch, head): `prepare_head(bh)`, a GEMM for the full S x S
// q k^T (f32, as the originals' einsums on f32-cast operands), one pass per row while it is in L1,
// and a GEMM with v writing the head's output. In the row pass `weigh_row(i, row, scratch)`
// applies the decay to the visible keys j <= i of row i in place and returns 1 / norm (scratch:
// S floats of this thread's own); the frame scales the visible keys by it and writes the masked
// keys as the 0 the decay gives them. Where the output is bf16 the weights are rounded to a bf16
// matrix (as the originals cast them), which the second GEMM reads as bf16 operands: held as bf16
// values in f32, they had kept that GEMM on an f32 path, 11 of 14 ms of 15p's baseline on the AMX
// Xeon (2026-12-04). With an f32 output (the oracle) nothing is rounded.
template <class PrepareHead, class WeighRow>
int baseline(const bhsd::Shape& shape, const kb_config* cfg, const kb_tensor* in, kb_tensor* out,
             PrepareHead prepare_head, WeighRow weigh_row) {
  const int threads = threads_of(cfg);
  const std::int64_t seq_len = shape.seq_len;
  const bool round_weights = out[0].dtype == KB_BF16;
  ops::ScratchMatrix scores(KB_F32, seq_len, seq_len);
  ops::ScratchMatrix weights(KB_BF16, round_weights ? seq_len : 0, seq_len);
  for (std::int64_t bh = 0; bh < shape.batch * shape.num_heads; ++bh) {
    prepare_head(bh);
    ops::gemm(bhsd::head_of(in[0], bh, shape), bhsd::head_of(in[1], bh, shape),
              /*b_transposed=*/true, scores.out());
#pragma omp parallel num_threads(threads)
    {
      std::vector<float> scratch(static_cast<std::size_t>(seq_len));
      // Row i costs i + 1: interleaved chunks balance the triangle across threads.
#pragma omp for schedule(static, 16)
      for (std::int64_t i = 0; i < seq_len; ++i) {
        auto* row = static_cast<float*>(scores.row(i));
        const auto visible = static_cast<std::size_t>(i + 1);
        const float inv_norm = weigh_row(i, row, scratch.data());
#pragma omp simd
        for (std::size_t j = 0; j < visible; ++j) row[j] *= inv_norm;
        if (round_weights) {
          auto* row_bf16 = static_cast<bf16_t*>(weights.row(i));
          convert_f32_to_bf16(row, row_bf16, visible);
          std::fill(row_bf16 + visible, row_bf16 + seq_len, bf16_t{0});
        } else {
          std::fill(row + visible, row + seq_len, 0.0f);
        }
      }
    }
    ops::gemm(round_weights ? weights.in() : scores.in(), bhsd::head_of(in[2], bh, shape),
              /*b_transposed=*/false, bhsd::head_of_output(out[0], bh, shape));
  }
  return 0;
}

// The original program op by op, per (batch, head): `prepare_head(bh)`, the S x S decay matrix
// decay_at(i, j) in f32 (for every i, j: the original materializes it, masked half included), q k^T
// in f32, scores * decay, the division of each row by `norm_of(row, S)`, the cast of the scores to
// bf16, and the bf16 einsum with v (f32 accumulation, one rounding to the output).
template <class PrepareHead, class DecayAt, class NormOf>
int bf16_program(const bhsd::Shape& shape, const kb_config* cfg, const kb_tensor* in,
                 kb_tensor* out, PrepareHead prepare_head, DecayAt decay_at, NormOf norm_of) {
  const int threads = threads_of(cfg);
  const std::int64_t seq_len = shape.seq_len;
  const auto n = static_cast<std::size_t>(seq_len);
  ops::ScratchMatrix scores(KB_F32, seq_len, seq_len);
  ops::ScratchMatrix scores_bf16(KB_BF16, seq_len, seq_len);
  std::vector<float> decay(n * n);
  for (std::int64_t bh = 0; bh < shape.batch * shape.num_heads; ++bh) {
    prepare_head(bh);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t i = 0; i < seq_len; ++i)
      for (std::int64_t j = 0; j < seq_len; ++j) decay[i * n + j] = decay_at(i, j);
    ops::gemm(bhsd::head_of(in[0], bh, shape), bhsd::head_of(in[1], bh, shape),
              /*b_transposed=*/true, scores.out());
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t i = 0; i < seq_len; ++i) {
      auto* row = static_cast<float*>(scores.row(i));
      for (std::int64_t j = 0; j < seq_len; ++j) row[j] *= decay[i * n + j];
      const float norm = norm_of(row, seq_len);
      auto* row_bf16 = static_cast<bf16_t*>(scores_bf16.row(i));
      for (std::int64_t j = 0; j < seq_len; ++j) row_bf16[j] = f32_to_bf16(row[j] / norm);
    }
    ops::gemm(scores_bf16.in(), bhsd::head_of(in[2], bh, shape), /*b_transposed=*/false,
              bhsd::head_of_output(out[0], bh, shape));
  }
  return 0;
}

}  // namespace kbench::decayed_scores
