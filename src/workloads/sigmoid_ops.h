// A vectorized logistic sigmoid over a contiguous f32 row: the gates of the triangle
// multiplicative update (17p), where no GEMM epilogue offers a sigmoid.
#pragma once

#include <cstddef>

namespace kbench::sigmoid_ops {

// x[i] = 1 / (1 + exp(-x[i])) in f32 lanes (Highway's Exp, arguments clamped to +-88 where the
// result is 0 or 1 to f32 precision anyway).
void sigmoid_inplace(float* x, std::size_t n);

}  // namespace kbench::sigmoid_ops
