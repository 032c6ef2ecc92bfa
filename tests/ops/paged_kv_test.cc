// The paged KV cache blocks of 6p and 7p (ops/paged_kv.h) at edge shapes: page tables in and
// out of range, gathers with partial and single-token pages, shuffled tables, and attention of
// query blocks against a visible prefix against a double-precision loop.
#include "ops/paged_kv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "core/bf16.h"

namespace kbench::ops {
namespace {

std::vector<bf16_t> random_bf16(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<bf16_t> values(n);
  for (bf16_t& v : values) v = f32_to_bf16(normal(rng));
  return values;
}

TEST(PagedKv, PagesInRange) {
  const std::vector<std::int32_t> table = {0, 3, 2, 1};
  EXPECT_TRUE(pages_in_range(table.data(), 4, 4));
  EXPECT_FALSE(pages_in_range(table.data(), 4, 3));  // page 3 of 3
  EXPECT_TRUE(pages_in_range(table.data(), 1, 1));   // only the entries counted are checked
  EXPECT_TRUE(pages_in_range(table.data(), 0, 0));
  const std::vector<std::int32_t> negative = {1, -1};
  EXPECT_FALSE(pages_in_range(negative.data(), 2, 8));
}

TEST(PagedKv, GatherMatchesIndexing) {
  for (const std::int64_t page_size : {1, 5, 16}) {
    for (const std::int64_t token_elems : {1, 37, 256}) {
      const std::int64_t num_pages = 7;
      const std::vector<bf16_t> pages =
          random_bf16(static_cast<std::size_t>(num_pages * page_size * token_elems), 3);
      const std::vector<std::int32_t> table = {4, 0, 6, 2, 5, 1, 3};
      const PagedCache cache{pages.data(), num_pages, page_size, token_elems};
      // None, one token, a partial last page, exactly whole pages, the whole table.
      for (const std::int64_t tokens :
           {std::int64_t{0}, std::int64_t{1}, 2 * page_size + 1, 3 * page_size, 7 * page_size}) {
        std::vector<bf16_t> dst(static_cast<std::size_t>(tokens * token_elems) + 1, 0xABCD);
        gather_tokens(cache, table.data(), tokens, dst.data());
        for (std::int64_t j = 0; j < tokens; ++j)
          for (std::int64_t e = 0; e < token_elems; ++e)
            ASSERT_EQ(dst[j * token_elems + e],
                      pages[(table[j / page_size] * page_size + j % page_size) * token_elems + e])
                << "page_size " << page_size << " token " << j << " elem " << e;
        EXPECT_EQ(dst.back(), 0xABCD) << "wrote past the gathered tokens";
      }
    }
  }
}

TEST(PagedKv, SliceGatherMatchesIndexing) {
  const std::int64_t page_size = 5, token_elems = 24, num_pages = 4;
  const std::vector<bf16_t> pages =
      random_bf16(static_cast<std::size_t>(num_pages * page_size * token_elems), 4);
  const std::vector<std::int32_t> table = {2, 0, 3, 1};
  const PagedCache cache{pages.data(), num_pages, page_size, token_elems};
  // The first values, a middle slice, the last values, a whole token.
  for (const auto& [first, elems] :
       {std::pair<std::int64_t, std::int64_t>{0, 8}, {8, 8}, {17, 7}, {0, token_elems}}) {
    for (const std::int64_t tokens : {std::int64_t{0}, std::int64_t{1}, 2 * page_size + 3}) {
      std::vector<bf16_t> dst(static_cast<std::size_t>(tokens * elems) + 1, 0xABCD);
      gather_token_slice(cache, table.data(), tokens, first, elems, dst.data());
      for (std::int64_t j = 0; j < tokens; ++j)
        for (std::int64_t e = 0; e < elems; ++e)
          ASSERT_EQ(
              dst[j * elems + e],
              pages[(table[j / page_size] * page_size + j % page_size) * token_elems + first + e])
              << "slice at " << first << " token " << j << " elem " << e;
      EXPECT_EQ(dst.back(), 0xABCD) << "wrote past the gathered slice";
    }
  }
}

TEST(PagedKv, ShuffledPagesIsASeededPermutation) {
  for (const std::int64_t n : {0, 1, 2, 77, 4096}) {
    std::vector<std::int32_t> a(static_cast<std::size_t>(n)), b(a.size()), c(a.size());
    shuffled_pages(42, 3, a.data(), n);
    shuffled_pages(42, 3, b.data(), n);
    shuffled_pages(43, 3, c.data(), n);
    EXPECT_EQ(a, b) << "not a function of (seed, stream)";
    std::vector<std::int32_t> sorted = a;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int32_t> identity(a.size());
    std::iota(identity.begin(), identity.end(), 0);
    EXPECT_EQ(sorted, identity) << "not a permutation of [0, " << n << ")";
    if (n >= 77) {
      EXPECT_NE(a, c) << "the seed does not change the table";
      EXPECT_NE(a, identity) << "not shuffled";
    }
  }
}

TEST(PagedKv, VisibilityClips) {
  EXPECT_EQ((Visibility{5, 0}.keys(3, 9)), 5);
  EXPECT_EQ((Visibility{5, 0}.keys(0, 4)), 4);   // clipped to the keys present
  EXPECT_EQ((Visibility{-2, 1}.keys(0, 9)), 0);  // none visible
  EXPECT_EQ((Visibility{-2, 1}.keys(3, 9)), 1);
  EXPECT_EQ((Visibility{1, 1}.keys(20, 9)), 9);
}

// attend() against double loops: softmax over the visible prefix (uniform over all present keys
// for a row that sees none), for strided query and output rows.
void check_attend(std::int64_t rows, std::int64_t head_dim, std::int64_t present,
                  Visibility visibility, kb_dtype probability_dtype, kb_dtype out_dtype) {
  SCOPED_TRACE(::testing::Message()
               << "rows " << rows << " head_dim " << head_dim << " present " << present << " first "
               << visibility.first << " step " << visibility.step << " probabilities "
               << (probability_dtype == KB_BF16 ? "bf16" : "f32"));
  const std::int64_t q_ld = head_dim + 3, kv_ld = 2 * head_dim + 1, out_ld = head_dim + 2;
  const std::vector<bf16_t> q = random_bf16(static_cast<std::size_t>(rows * q_ld), 1);
  const std::vector<bf16_t> kv = random_bf16(static_cast<std::size_t>(present * kv_ld) + 1, 2);
  const bf16_t* k = kv.data();
  const bf16_t* v = kv.data() + head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  std::vector<float> out_f32(static_cast<std::size_t>(rows * out_ld), -7.0f);
  std::vector<bf16_t> out_bf16(out_f32.size(), f32_to_bf16(-7.0f));
  void* out_data = out_dtype == KB_F32 ? static_cast<void*>(out_f32.data()) : out_bf16.data();
  attend({q.data(), KB_BF16, rows, head_dim, q_ld}, k, v, kv_ld, present, visibility, scale,
         probability_dtype, {out_data, out_dtype, rows, head_dim, out_ld});

  const double bound = probability_dtype == KB_BF16 || out_dtype == KB_BF16 ? 2e-2 : 1e-4;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t visible = visibility.keys(r, present);
    std::vector<double> weights(static_cast<std::size_t>(present), 0.0);
    if (visible == 0) {
      std::fill(weights.begin(), weights.end(), 1.0 / static_cast<double>(present));
    } else {
      double max_score = -INFINITY;
      for (std::int64_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (std::int64_t d = 0; d < head_dim; ++d)
          dot += static_cast<double>(bf16_to_f32(q[r * q_ld + d])) * bf16_to_f32(k[j * kv_ld + d]);
        weights[j] = dot * scale;
        max_score = std::max(max_score, weights[j]);
      }
      double sum = 0;
      for (std::int64_t j = 0; j < visible; ++j)
        sum += weights[j] = std::exp(weights[j] - max_score);
      for (std::int64_t j = 0; j < visible; ++j) weights[j] /= sum;
    }
    for (std::int64_t d = 0; d < head_dim; ++d) {
      double expected = 0;
      for (std::int64_t j = 0; j < present; ++j)
        expected += weights[j] * bf16_to_f32(v[j * kv_ld + d]);
      const double got =
          out_dtype == KB_F32 ? out_f32[r * out_ld + d] : bf16_to_f32(out_bf16[r * out_ld + d]);
      ASSERT_NEAR(got, expected, bound * (1 + std::abs(expected))) << "row " << r << " dim " << d;
    }
    // The padding between strided output rows is left alone.
    for (std::int64_t d = head_dim; d < out_ld; ++d) {
      const double got =
          out_dtype == KB_F32 ? out_f32[r * out_ld + d] : bf16_to_f32(out_bf16[r * out_ld + d]);
      ASSERT_EQ(got, -7.0) << "row " << r << " wrote the padding at " << d;
    }
  }
}

TEST(PagedKv, AttendDecodeRows) {
  for (const std::int64_t rows : {1, 7, 8, 17})
    for (const std::int64_t head_dim : {1, 37, 128})
      for (const std::int64_t present : {1, 5, 33})
        check_attend(rows, head_dim, present, {present, 0}, KB_F32, KB_F32);
}

TEST(PagedKv, AttendCausalRowsAndFullyMaskedRows) {
  // Rows see 1, 2, ... keys; then rows that see none at first (the uniform average).
  check_attend(9, 37, 33, {25, 1}, KB_F32, KB_F32);
  check_attend(5, 16, 7, {-2, 1}, KB_F32, KB_F32);
  check_attend(3, 8, 5, {0, 0}, KB_F32, KB_F32);
}

TEST(PagedKv, AttendBf16ProbabilitiesAndOutputs) {
  check_attend(8, 128, 61, {61, 0}, KB_BF16, KB_BF16);
  check_attend(17, 37, 40, {24, 1}, KB_BF16, KB_F32);
}

}  // namespace
}  // namespace kbench::ops
