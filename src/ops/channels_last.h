// Channels-last (N, spatial..., C) to plain (N, C, spatial...): the layout change after a
// convolution whose kernel writes channels-last for a caller that wants the plain layout.
// oneDNN's own reorder for it ("jit:uni") moved 6.5 MB of bf16 at 18k's cpu shape in about 2 ms on
// the AMX Xeon; blocks of 8x8 (2-byte) or 4x4 (4-byte) elements transposed in SSE registers,
// which every x86-64 CPU has, took 0.7 ms against 0.44 ms for a plain copy of the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kbench::ops {

// dst[n][c][s] = src[n][s][c] for elements of `element_bytes` (2 or 4) bytes, `spatial` the
// product of the spatial extents; both dense. Spread over OpenMP's thread budget.
void channels_last_to_plain(const void* src, void* dst, std::size_t element_bytes,
                            std::int64_t batch, std::int64_t channels, std::int64_t spatial);

}  // namespace kbench::ops
