// Paged KV cache blocks: see paged_kv.h.
#include "ops/paged_kv.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/philox.h"
#include "ops/rows.h"

namespace kbench::ops {

bool pages_in_range(const std::int32_t* page_table, std::int64_t count, std::int64_t num_pages) {
  for (std::int64_t i = 0; i < count; ++i)
    if (page_table[i] < 0 || page_table[i] >= num_pages) return false;
  return true;
}

void gather_tokens(const PagedCache& cache, const std::int32_t* page_table, std::int64_t num_tokens,
                   bf16_t* dst) {
  const std::int64_t page_elems = cache.page_size * cache.token_elems;
  for (std::int64_t first = 0, i = 0; first < num_tokens; first += cache.page_size, ++i) {
    const std::int64_t tokens = std::min(cache.page_size, num_tokens - first);
    std::memcpy(dst + first * cache.token_elems, cache.data + page_table[i] * page_elems,
                static_cast<std::size_t>(tokens * cache.token_elems) * sizeof(bf16_t));
  }
}

void gather_token_slice(const PagedCache& cache, const std::int32_t* page_table,
                        std::int64_t num_tokens, std::int64_t first_elem, std::int64_t elems,
                        bf16_t* dst) {
  for (std::int64_t t = 0; t < num_tokens; ++t) {
    const std::int64_t page = page_table[t / cache.page_size];
    const bf16_t* token =
        cache.data + (page * cache.page_size + t % cache.page_size) * cache.token_elems;
    std::memcpy(dst + t * elems, token + first_elem,
                static_cast<std::size_t>(elems) * sizeof(bf16_t));
  }
}

void shuffled_pages(std::uint64_t seed, std::uint32_t stream, std::int32_t* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<std::int32_t>(i);
  const PhiloxKey key = philox_key(seed);
  for (std::int64_t i = n - 1; i > 0; --i) {
    // 64 random bits per swap: the modulo bias is below 2^-40 for any table that fits in memory.
    const PhiloxBlock bits =
        philox4x32_10(philox_counter(static_cast<std::uint64_t>(i), stream), key);
    const std::uint64_t draw = (std::uint64_t{bits[0]} << 32) | bits[1];
    const auto j = static_cast<std::int64_t>(draw % static_cast<std::uint64_t>(i + 1));
    std::swap(out[i], out[j]);
  }
}

std::int64_t Visibility::keys(std::int64_t row, std::int64_t present) const {
  return std::clamp<std::int64_t>(first + row * step, 0, present);
}

void attend(const ops::Matrix& q, const bf16_t* k, const bf16_t* v, std::int64_t kv_ld,
            std::int64_t present, Visibility visibility, float scale, kb_dtype probability_dtype,
            const ops::MutableMatrix& out) {
  const std::int64_t rows = q.rows;
  const std::int64_t head_dim = q.cols;
  if (present == 0) {  // nothing to attend to: the empty sum
    const std::size_t element = out.dtype == KB_F32 ? sizeof(float) : sizeof(bf16_t);
    for (std::int64_t r = 0; r < rows; ++r)
      std::memset(static_cast<char*>(out.data) + static_cast<std::size_t>(r * out.ld) * element, 0,
                  static_cast<std::size_t>(head_dim) * element);
    return;
  }
  ops::ScratchMatrix scores(KB_F32, rows, present);
  ops::gemm(q, {k, KB_BF16, present, head_dim, kv_ld}, /*b_transposed=*/true, scores.out(),
            {.alpha = scale});
  const bool round_probabilities = probability_dtype == KB_BF16;
  ops::ScratchMatrix probabilities(round_probabilities ? KB_BF16 : KB_F32,
                                   round_probabilities ? rows : 0, present);
  const auto width = static_cast<std::size_t>(present);
  for (std::int64_t r = 0; r < rows; ++r) {
    auto* row = static_cast<float*>(scores.row(r));
    // Masked keys carry a mask value so negative that exp() of it is exactly 0 in f32.
    const auto visible = static_cast<std::size_t>(visibility.keys(r, present));
    if (round_probabilities)
      ops::prefix_softmax(row, visible, width, static_cast<bf16_t*>(probabilities.row(r)));
    else
      ops::prefix_softmax(row, visible, width);
  }
  ops::gemm(round_probabilities ? probabilities.in() : scores.in(),
            {v, KB_BF16, present, head_dim, kv_ld}, /*b_transposed=*/false, out);
}

}  // namespace kbench::ops
