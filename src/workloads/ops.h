// Building blocks for baselines: the library calls and vectorized loops an eager framework would
// run op by op (dtype conversion, sgemm, row softmax pieces), on f32 scratch buffers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kbench/kernel.h"

namespace kbench::ops {

// A 64-byte-aligned f32 scratch buffer. Memory comes from a per-thread cache of freed buffers, as
// an eager framework's caching allocator would provide: results never depend on it, but without it
// every call page-faults its scratch afresh (0.8-1.5 ms per MB on the reference VM, 10-20% of the
// 8p baseline).
class F32Buffer {
 public:
  explicit F32Buffer(std::size_t n);
  F32Buffer(F32Buffer&& other) noexcept;
  F32Buffer& operator=(F32Buffer&& other) noexcept;
  F32Buffer(const F32Buffer&) = delete;
  F32Buffer& operator=(const F32Buffer&) = delete;
  ~F32Buffer();

  float* data() { return data_; }
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  float* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_bytes_ = 0;
};

// The tensor's values as f32 (bf16 widened exactly; f32 copied; i32 converted).
F32Buffer load_f32(const kb_tensor& t);

// Writes f32 values into `out` in its declared dtype (bf16 with round-to-nearest-even).
void store(const float* values, kb_tensor& out);

// Rounds every value to the nearest bf16 in place when `out_dtype` is bf16: the value a bf16 tensor
// between two eager ops would hold. A no-op for the f32 oracle.
void round_like(kb_dtype out_dtype, float* values, std::size_t n);

// C[M,N] = alpha * A[M,K] @ op(B) + beta * C, row-major; op(B) = B[K,N], or B[N,K]^T when
// b_transposed. Single library call (OpenBLAS sgemm; see docs/baselines.md for the measured
// choice).
void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, bool b_transposed, float beta,
           float* c, std::int64_t ldc);

// In-place vectorized elementwise ops (Highway), each one pass over memory.
void exp_inplace(float* x, std::size_t n);
void silu_inplace(float* x, std::size_t n);  // x * sigmoid(x)

}  // namespace kbench::ops
