// Causal attention over one head: the fused baseline, the bf16 program emulation and the double
// reference (see attention.h).
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "core/tensor.h"
#include "ops/gemm.h"
#include "ops/rows.h"

namespace kbench::ops {
namespace {

// 1 MiB of f32 scores per block; see attention_rows_per_block.
constexpr std::int64_t kScoreBlockBytes = 1024 * 1024;
constexpr std::int64_t kMinRowsPerBlock = 64;

ops::Matrix rows_of(const bf16_t* base, std::int64_t ld, std::int64_t first, std::int64_t rows,
                    std::int64_t cols) {
  return {base + first * ld, KB_BF16, rows, cols, ld};
}

ops::MutableMatrix out_rows(const HeadView& head, std::int64_t first, std::int64_t rows,
                            std::int64_t cols) {
  const std::size_t element = dtype_size(head.out_dtype);
  return {static_cast<char*>(head.out) + static_cast<std::size_t>(first * head.out_ld) * element,
          head.out_dtype, rows, cols, head.out_ld};
}

// `rows` rows of `cols` bf16 values, `ld` apart, as a dense matrix: the rows themselves when they
// are dense, else their copy in `copy` (at least rows x cols).
ops::Matrix dense_rows(const bf16_t* base, std::int64_t ld, std::int64_t first, std::int64_t rows,
                       std::int64_t cols, ops::ScratchMatrix& copy) {
  if (ld == cols) return rows_of(base, ld, first, rows, cols);
  const auto row_bytes = static_cast<std::size_t>(cols) * sizeof(bf16_t);
  for (std::int64_t r = 0; r < rows; ++r)
    std::memcpy(copy.row(r), base + (first + r) * ld, row_bytes);
  ops::Matrix m = copy.in();
  m.rows = rows;
  return m;
}

}  // namespace

std::int64_t attention_rows_per_block(std::int64_t seq_len) {
  const std::int64_t rows = kScoreBlockBytes / (4 * std::max<std::int64_t>(seq_len, 1));
  return std::min(seq_len, std::max(kMinRowsPerBlock, rows));
}

void attention_baseline(const HeadView& head, std::int64_t seq_len, std::int64_t head_dim,
                        const ScoreSteps& steps, std::int64_t rows_per_block) {
  if (rows_per_block <= 0) rows_per_block = attention_rows_per_block(seq_len);
  rows_per_block = std::min(rows_per_block, seq_len);
  const kb_dtype probability_dtype = head.out_dtype;
  const auto alpha = static_cast<float>(steps.scale.value_or(1.0));
  ops::ScratchMatrix scores(KB_F32, rows_per_block, seq_len);
  // The oracle's probabilities stay in `scores`; only the timed run stores a bf16 copy.
  ops::ScratchMatrix probabilities(probability_dtype,
                                   probability_dtype == KB_BF16 ? rows_per_block : 0, seq_len);
  // oneDNN's matmul runs strided operands and outputs slower than dense ones: where heads are
  // interleaved (BSHD, rows H * D apart), K and V are copied dense once per head, and each block's
  // query rows and outputs pass through dense blocks. On the AMX Xeon 2p's 512 x 512 x 128 score
  // GEMM took 0.23 ms with rows 16 D apart and 0.05 ms dense; the copies are a few microseconds.
  const auto strided_rows = [&](std::int64_t ld, std::int64_t rows) {
    return ld == head_dim ? 0 : rows;
  };
  ops::ScratchMatrix k_copy(KB_BF16, strided_rows(head.k_ld, seq_len), head_dim);
  ops::ScratchMatrix v_copy(KB_BF16, strided_rows(head.v_ld, seq_len), head_dim);
  ops::ScratchMatrix q_copy(KB_BF16, strided_rows(head.q_ld, rows_per_block), head_dim);
  ops::ScratchMatrix out_copy(head.out_dtype, strided_rows(head.out_ld, rows_per_block), head_dim);
  const ops::Matrix keys = dense_rows(head.k, head.k_ld, 0, seq_len, head_dim, k_copy);
  const ops::Matrix values = dense_rows(head.v, head.v_ld, 0, seq_len, head_dim, v_copy);

  for (std::int64_t first = 0; first < seq_len; first += rows_per_block) {
    const std::int64_t rows = std::min(rows_per_block, seq_len - first);
    ops::MutableMatrix block = scores.out();
    block.rows = rows;
    ops::gemm(dense_rows(head.q, head.q_ld, first, rows, head_dim, q_copy), keys,
              /*b_transposed=*/true, block, {.alpha = alpha});

#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = first + r;
      auto* row = static_cast<float*>(scores.row(r));
      // Keys j > i hold the masked score, whose exp(masked - max) is exactly 0 in f32: the softmax
      // over the visible prefix followed by zeros is the masked softmax, bit for bit.
      const auto visible = static_cast<std::size_t>(i + 1);
      if (head.bias != nullptr) {
        const bf16_t* bias_row = head.bias + i * seq_len;
        for (std::size_t j = 0; j < visible; ++j) row[j] += bf16_to_f32(bias_row[j]);
      }
      if (probability_dtype == KB_BF16)
        ops::prefix_softmax(row, visible, static_cast<std::size_t>(seq_len),
                            static_cast<bf16_t*>(probabilities.row(r)));
      else
        ops::prefix_softmax(row, visible, static_cast<std::size_t>(seq_len));
    }

    ops::Matrix p = probability_dtype == KB_BF16 ? probabilities.in() : scores.in();
    p.rows = rows;
    const ops::MutableMatrix out = out_rows(head, first, rows, head_dim);
    if (head.out_ld == head_dim) {
      ops::gemm(p, values, /*b_transposed=*/false, out);
      continue;
    }
    ops::MutableMatrix dense_out = out_copy.out();
    dense_out.rows = rows;
    ops::gemm(p, values, /*b_transposed=*/false, dense_out);
    const std::size_t element = dtype_size(head.out_dtype);
    for (std::int64_t r = 0; r < rows; ++r)
      std::memcpy(static_cast<char*>(out.data) + static_cast<std::size_t>(r * out.ld) * element,
                  out_copy.row(r), static_cast<std::size_t>(head_dim) * element);
  }
}

void attention_bf16_program(const HeadView& head, std::int64_t seq_len, std::int64_t head_dim,
                            const ScoreSteps& steps) {
  const std::int64_t rows_per_block = attention_rows_per_block(seq_len);
  ops::ScratchMatrix scores(KB_BF16, rows_per_block, seq_len);
  ops::ScratchMatrix probabilities(KB_BF16, rows_per_block, seq_len);
  const ops::Matrix keys = rows_of(head.k, head.k_ld, 0, seq_len, head_dim);
  const ops::Matrix values = rows_of(head.v, head.v_ld, 0, seq_len, head_dim);
  const bool has_scale = steps.scale.has_value();
  const float scale = round_to_bf16(static_cast<float>(steps.scale.value_or(1.0)));
  const float masked = round_to_bf16(static_cast<float>(steps.masked_score));
  std::vector<float> s(static_cast<std::size_t>(seq_len));

  for (std::int64_t first = 0; first < seq_len; first += rows_per_block) {
    const std::int64_t rows = std::min(rows_per_block, seq_len - first);
    ops::MutableMatrix block = scores.out();
    block.rows = rows;
    ops::gemm(rows_of(head.q, head.q_ld, first, rows, head_dim), keys, /*b_transposed=*/true,
              block);  // bf16 output: one rounding of the f32 dot

    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = first + r;
      const auto* qk = static_cast<const bf16_t*>(scores.row(r));
      auto* p = static_cast<bf16_t*>(probabilities.row(r));
      const bf16_t* bias_row = head.bias != nullptr ? head.bias + i * seq_len : nullptr;
      const bool has_masked = i + 1 < seq_len;
      float max_score = has_masked ? masked : -INFINITY;  // masked keys take part in the max
      for (std::int64_t j = 0; j <= i; ++j) {
        float x = bf16_to_f32(qk[j]);
        if (has_scale) x = round_to_bf16(x * scale);
        if (bias_row != nullptr) x = round_to_bf16(x + bf16_to_f32(bias_row[j]));
        s[static_cast<std::size_t>(j)] = x;
        max_score = std::max(max_score, x);
      }
      // Every masked key has the same exponent.
      const float masked_exp =
          has_masked ? round_to_bf16(std::exp(round_to_bf16(masked - max_score))) : 0.0f;
      float sum = masked_exp * static_cast<float>(seq_len - 1 - i);
      for (std::int64_t j = 0; j <= i; ++j) {
        const float e =
            round_to_bf16(std::exp(round_to_bf16(s[static_cast<std::size_t>(j)] - max_score)));
        s[static_cast<std::size_t>(j)] = e;
        sum += e;
      }
      sum = round_to_bf16(sum);
      for (std::int64_t j = 0; j <= i; ++j)
        p[j] = f32_to_bf16(s[static_cast<std::size_t>(j)] / sum);
      std::fill(p + i + 1, p + seq_len, f32_to_bf16(masked_exp / sum));
    }

    ops::Matrix pm = probabilities.in();
    pm.rows = rows;
    ops::gemm(pm, values, /*b_transposed=*/false, out_rows(head, first, rows, head_dim));
  }
}

void attention_reference(const HeadView& head, std::int64_t seq_len, std::int64_t head_dim,
                         const ScoreSteps& steps) {
  const double scale = steps.scale.value_or(1.0);
  std::vector<double> scores(static_cast<std::size_t>(seq_len));
  std::vector<double> acc(static_cast<std::size_t>(head_dim));
  auto* out = static_cast<float*>(head.out);
  for (std::int64_t i = 0; i < seq_len; ++i) {
    const bf16_t* q = head.q + i * head.q_ld;
    double max_score = -INFINITY;
    for (std::int64_t j = 0; j <= i; ++j) {
      const bf16_t* k = head.k + j * head.k_ld;
      double dot = 0;
      for (std::int64_t d = 0; d < head_dim; ++d)
        dot += static_cast<double>(bf16_to_f32(q[d])) * bf16_to_f32(k[d]);
      double score = dot * scale;
      if (head.bias != nullptr) score += bf16_to_f32(head.bias[i * seq_len + j]);
      scores[static_cast<std::size_t>(j)] = score;
      max_score = std::max(max_score, score);
    }
    // Masked keys (j > i) weigh exp(masked_score - max) = 0 in double as well: not visited.
    double sum = 0;
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::int64_t j = 0; j <= i; ++j) {
      const double weight = std::exp(scores[static_cast<std::size_t>(j)] - max_score);
      sum += weight;
      const bf16_t* v = head.v + j * head.v_ld;
      for (std::int64_t d = 0; d < head_dim; ++d) acc[d] += weight * bf16_to_f32(v[d]);
    }
    for (std::int64_t d = 0; d < head_dim; ++d)
      out[i * head.out_ld + d] = static_cast<float>(acc[d] / sum);
  }
}

}  // namespace kbench::ops
