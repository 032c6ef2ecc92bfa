// ops::transpose and ops::channels_last_to_plain against element-by-element loops: extents that
// are and are not multiples of the register blocks (8 and 4) and of the 64-element tiles, one
// element, several images, strided rows, both element sizes, and on more than one thread.
#include "ops/transpose.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace kbench::ops {
namespace {

template <typename T>
void expect_transposed(std::int64_t batch, std::int64_t channels, std::int64_t spatial) {
  std::vector<T> src(static_cast<std::size_t>(batch * channels * spatial));
  std::iota(src.begin(), src.end(), T{1});
  std::vector<T> dst(src.size(), T{0});
  channels_last_to_plain(src.data(), dst.data(), sizeof(T), batch, channels, spatial);
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t s = 0; s < spatial; ++s) {
        const std::int64_t image = n * channels * spatial;
        ASSERT_EQ(dst[image + c * spatial + s], src[image + s * channels + c])
            << "n " << n << " c " << c << " s " << s << " of " << batch << "x" << channels << "x"
            << spatial;
      }
}

const std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> kShapes = {
    {1, 1, 1},   {1, 8, 8},    {2, 16, 64}, {1, 3, 5},     {2, 9, 17},
    {3, 64, 65}, {1, 130, 71}, {2, 7, 200}, {1, 128, 6400}};

TEST(ChannelsLast, TwoByteElementsMatchTheElementLoop) {
  for (const auto& [batch, channels, spatial] : kShapes)
    expect_transposed<std::uint16_t>(batch, channels, spatial);
}

TEST(ChannelsLast, FourByteElementsMatchTheElementLoop) {
  for (const auto& [batch, channels, spatial] : kShapes)
    expect_transposed<std::uint32_t>(batch, channels, spatial);
}

TEST(ChannelsLast, TwoThreadsWriteTheSameResult) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
  expect_transposed<std::uint16_t>(3, 33, 1000);
  expect_transposed<std::uint32_t>(3, 33, 1000);
  omp_set_num_threads(threads);
}

// A block of a wider matrix into a block of another: rows src_ld and dst_ld apart, nothing
// written outside the rows x cols block's transpose.
template <typename T>
void expect_block_transposed(std::int64_t rows, std::int64_t cols) {
  const std::int64_t src_ld = cols + 5, dst_ld = rows + 3;
  std::vector<T> src(static_cast<std::size_t>(rows * src_ld));
  std::iota(src.begin(), src.end(), T{1});
  constexpr T kGuard = 0x7bad;
  std::vector<T> dst(static_cast<std::size_t>(cols * dst_ld), kGuard);
  transpose(src.data(), src_ld, dst.data(), dst_ld, rows, cols, sizeof(T));
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < dst_ld; ++r) {
      const T want = r < rows ? src[r * src_ld + c] : kGuard;
      ASSERT_EQ(dst[c * dst_ld + r], want) << "c " << c << " r " << r << " of " << rows << "x"
                                           << cols;
    }
}

TEST(Transpose, StridedBlocksMatchTheElementLoop) {
  for (const auto& [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {8, 8}, {3, 17}, {65, 9}, {256, 128}, {100, 70}}) {
    expect_block_transposed<std::uint16_t>(rows, cols);
    expect_block_transposed<std::uint32_t>(rows, cols);
  }
}

TEST(ChannelsLast, RefusesOtherElementSizes) {
  std::vector<double> src(4), dst(4);
  EXPECT_THROW(channels_last_to_plain(src.data(), dst.data(), sizeof(double), 1, 2, 2),
               std::invalid_argument);
  EXPECT_THROW(transpose(src.data(), 2, dst.data(), 2, 2, 2, sizeof(double)),
               std::invalid_argument);
}

}  // namespace
}  // namespace kbench::ops
