// The pieces the matmul-shaped baselines (8p GEMM, 9p SwiGLU MLP, 41k Gemm+Add+ReLU) compose around
// ops::sgemm: a matmul op that allocates its result as an eager framework's does, the one-pass
// elementwise ops that follow it, and the tensor checks every kb_run entry point starts with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "kbench/kernel.h"
#include "workloads/ops.h"

namespace kbench::ops {

// True when `t` has dtype `dtype` and exactly the extents `shape` (which fixes its rank too).
bool matches(const kb_tensor& t, kb_dtype dtype, std::initializer_list<std::int64_t> shape);

// True when `t` can receive a baseline's result of extents `shape`: bf16 (the timed run) or f32
// (the oracle).
bool is_float_output(const kb_tensor& t, std::initializer_list<std::int64_t> shape);

// a[m,k] @ b[k,n] (row-major, f32) into a new f32 buffer, with one sgemm.
F32Buffer matmul(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n);

// x[r, c] += bias[c] for a row-major x[rows, cols]: a broadcast add, one pass.
void add_bias_rows(float* x, const float* bias, std::int64_t rows, std::int64_t cols);

// x = max(x, 0) in place, one pass; NaN stays NaN, as in torch.relu and jax.nn.relu.
void relu_inplace(float* x, std::size_t n);

// x *= y elementwise in place, one pass.
void multiply_inplace(float* x, const float* y, std::size_t n);

}  // namespace kbench::ops
