// Matmul op, its elementwise companions and tensor checks. The loops are plain so that GCC
// vectorizes them at -O3 -march=native (AVX2 or AVX-512 alike); each reads and writes memory once.
#include "workloads/matmul_ops.h"

#include <iterator>

namespace kbench::ops {

bool matches(const kb_tensor& t, kb_dtype dtype, std::initializer_list<std::int64_t> shape) {
  if (shape.size() > std::size(t.shape)) return false;  // beyond the ABI's rank limit of 8
  if (t.dtype != dtype || t.rank != static_cast<std::int32_t>(shape.size())) return false;
  std::int32_t axis = 0;
  for (const std::int64_t extent : shape) {
    if (t.shape[axis++] != extent) return false;
  }
  return true;
}

bool is_float_output(const kb_tensor& t, std::initializer_list<std::int64_t> shape) {
  return matches(t, KB_BF16, shape) || matches(t, KB_F32, shape);
}

F32Buffer matmul(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n) {
  F32Buffer c(static_cast<std::size_t>(m * n));
  sgemm(m, n, k, 1.0f, a, k, b, n, /*b_transposed=*/false, 0.0f, c.data(), n);
  return c;
}

void add_bias_rows(float* __restrict x, const float* __restrict bias, std::int64_t rows,
                   std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r) {
    float* __restrict row = x + r * cols;
    for (std::int64_t c = 0; c < cols; ++c) row[c] += bias[c];
  }
}

void relu_inplace(float* x, std::size_t n) {
  // `x < 0` is false for NaN, so NaN passes through instead of becoming 0 as std::max(x, 0) would.
  for (std::size_t i = 0; i < n; ++i) x[i] = x[i] < 0.0f ? 0.0f : x[i];
}

void multiply_inplace(float* __restrict x, const float* __restrict y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= y[i];
}

}  // namespace kbench::ops
