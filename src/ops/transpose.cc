#include "ops/transpose.h"

#include <emmintrin.h>
#include <xmmintrin.h>

#include <algorithm>
#include <stdexcept>

namespace kbench::ops {
namespace {

// The 8x8 block of 2-byte elements at `in` (rows `in_stride` elements apart) transposed to `out`
// (rows `out_stride` apart): three rounds of unpacks, 16-, 32- then 64-bit.
inline __attribute__((always_inline)) void transpose_8x8(const std::uint16_t* in,
                                                         std::int64_t in_stride, std::uint16_t* out,
                                                         std::int64_t out_stride) {
  __m128i r[8], a[8], b[8];
  for (int i = 0; i < 8; ++i)
    r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * in_stride));
  for (int i = 0; i < 4; ++i) {
    a[i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    a[i + 4] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  // a[0..3]: columns 0-3 of row pairs (0,1) .. (6,7); a[4..7]: columns 4-7.
  for (int h = 0; h < 2; ++h) {
    b[4 * h + 0] = _mm_unpacklo_epi32(a[4 * h + 0], a[4 * h + 1]);
    b[4 * h + 1] = _mm_unpackhi_epi32(a[4 * h + 0], a[4 * h + 1]);
    b[4 * h + 2] = _mm_unpacklo_epi32(a[4 * h + 2], a[4 * h + 3]);
    b[4 * h + 3] = _mm_unpackhi_epi32(a[4 * h + 2], a[4 * h + 3]);
  }
  // b[4h + q]: columns 4h + 2q and 4h + 2q + 1 of rows 0-3; b[4h + 2 + q]: the same of rows 4-7.
  for (int h = 0; h < 2; ++h)
    for (int q = 0; q < 2; ++q) {
      const __m128i low = b[4 * h + q], high = b[4 * h + 2 + q];
      const int column = 4 * h + 2 * q;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + column * out_stride),
                       _mm_unpacklo_epi64(low, high));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (column + 1) * out_stride),
                       _mm_unpackhi_epi64(low, high));
    }
}

// The same for a 4x4 block of 4-byte elements.
inline __attribute__((always_inline)) void transpose_4x4(const float* in, std::int64_t in_stride,
                                                         float* out, std::int64_t out_stride) {
  __m128 r0 = _mm_loadu_ps(in), r1 = _mm_loadu_ps(in + in_stride),
         r2 = _mm_loadu_ps(in + 2 * in_stride), r3 = _mm_loadu_ps(in + 3 * in_stride);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(out, r0);
  _mm_storeu_ps(out + out_stride, r1);
  _mm_storeu_ps(out + 2 * out_stride, r2);
  _mm_storeu_ps(out + 3 * out_stride, r3);
}

// The rows x cols block at `in` (rows in_ld apart) transposed to `out` (rows out_ld apart) in
// square tiles of kTile, so that a tile's reads and writes stay in L1: whole register blocks
// inside, element by element at the ragged edges.
template <typename T, int kBlock, void (*kTranspose)(const T*, std::int64_t, T*, std::int64_t)>
void transpose_tiles(const T* in, std::int64_t in_ld, T* out, std::int64_t out_ld,
                     std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t kTile = 64;
  for (std::int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const std::int64_t r_end = std::min(rows, r0 + kTile);
    const std::int64_t r_blocks_end = r0 + (r_end - r0) / kBlock * kBlock;
    for (std::int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::int64_t c_end = std::min(cols, c0 + kTile);
      const std::int64_t c_blocks_end = c0 + (c_end - c0) / kBlock * kBlock;
      for (std::int64_t c = c0; c < c_blocks_end; c += kBlock)
        for (std::int64_t r = r0; r < r_blocks_end; r += kBlock)
          kTranspose(in + r * in_ld + c, in_ld, out + c * out_ld + r, out_ld);
      for (std::int64_t c = c0; c < c_end; ++c) {
        const std::int64_t r_from = c < c_blocks_end ? r_blocks_end : r0;
        for (std::int64_t r = r_from; r < r_end; ++r) out[c * out_ld + r] = in[r * in_ld + c];
      }
    }
  }
}

}  // namespace

void transpose(const void* src, std::int64_t src_ld, void* dst, std::int64_t dst_ld,
               std::int64_t rows, std::int64_t cols, std::size_t element_bytes) {
  if (element_bytes == 2) {
    transpose_tiles<std::uint16_t, 8, transpose_8x8>(static_cast<const std::uint16_t*>(src), src_ld,
                                                     static_cast<std::uint16_t*>(dst), dst_ld, rows,
                                                     cols);
  } else if (element_bytes == 4) {
    transpose_tiles<float, 4, transpose_4x4>(static_cast<const float*>(src), src_ld,
                                             static_cast<float*>(dst), dst_ld, rows, cols);
  } else {
    throw std::invalid_argument("ops::transpose: elements of 2 or 4 bytes only");
  }
}

void channels_last_to_plain(const void* src, void* dst, std::size_t element_bytes,
                            std::int64_t batch, std::int64_t channels, std::int64_t spatial) {
  if (element_bytes != 2 && element_bytes != 4)
    throw std::invalid_argument("ops::channels_last_to_plain: elements of 2 or 4 bytes only");
  // Tasks of 64 positions of one image: each a 64 x channels block of the source.
  constexpr std::int64_t kRowsPerTask = 64;
  const std::int64_t tasks_per_image = (spatial + kRowsPerTask - 1) / kRowsPerTask;
  const std::int64_t tasks = batch * tasks_per_image;
  const std::int64_t image = channels * spatial;
  const auto* in = static_cast<const char*>(src);
  auto* out = static_cast<char*>(dst);
#pragma omp parallel for schedule(static) if (tasks > 1 && image * batch > (1 << 16))
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t n = t / tasks_per_image, r0 = t % tasks_per_image * kRowsPerTask;
    const auto offset = static_cast<std::size_t>(n * image) * element_bytes;
    transpose(in + offset + static_cast<std::size_t>(r0 * channels) * element_bytes, channels,
              out + offset + static_cast<std::size_t>(r0) * element_bytes, spatial,
              std::min(kRowsPerTask, spatial - r0), channels, element_bytes);
  }
}

}  // namespace kbench::ops
