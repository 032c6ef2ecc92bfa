// Matrix transposes of 2- and 4-byte elements, in blocks of 8x8 (2-byte) or 4x4 (4-byte)
// elements transposed in SSE registers, which every x86-64 CPU has, inside 64x64 tiles that stay
// in L1. The layout changes of the baselines: a convolution's channels-last result for a caller
// that wants it plain (oneDNN's own reorder, "jit:uni", moved 6.5 MB of bf16 at 18k's cpu shape in
// about 2 ms on the AMX Xeon; this took 0.7 ms against 0.44 ms for a plain copy of the same
// bytes), and 17p's channel-major operands of its per-channel contraction.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kbench::ops {

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols, elements of `element_bytes`
// (2 or 4) bytes; on the calling thread.
void transpose(const void* src, std::int64_t src_ld, void* dst, std::int64_t dst_ld,
               std::int64_t rows, std::int64_t cols, std::size_t element_bytes);

// dst[n][c][s] = src[n][s][c] for elements of `element_bytes` (2 or 4) bytes, `spatial` the
// product of the spatial extents; both dense. Spread over OpenMP's thread budget.
void channels_last_to_plain(const void* src, void* dst, std::size_t element_bytes,
                            std::int64_t batch, std::int64_t channels, std::int64_t spatial);

}  // namespace kbench::ops
