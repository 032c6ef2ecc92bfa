// Building blocks for baselines: f32 scratch from a caching allocator and dtype conversion. The
// GEMM block is gemm.h; row passes are rows.h.
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

}  // namespace kbench::ops
