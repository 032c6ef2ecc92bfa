// Baseline scratch memory and dtype conversion.
#include "ops/buffers.h"

#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace kbench::ops {

namespace {

// Recycles freed scratch blocks within a thread. A block serves a request of up to its own size and
// at least half of it, so a small request never pins a huge block.
class ScratchPool {
 public:
  // Bounds what an idle thread keeps: enough for the largest cpu-size baseline's scratch.
  static constexpr std::size_t kMaxCachedBytes = std::size_t{1} << 30;

  ~ScratchPool() {
    for (const Block& b : blocks_) std::free(b.data);
  }

  float* take(std::size_t bytes, std::size_t& capacity) {
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_[i].bytes >= bytes && blocks_[i].bytes / 2 <= bytes) {
        const Block b = blocks_[i];
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        cached_bytes_ -= b.bytes;
        capacity = b.bytes;
        return b.data;
      }
    }
    capacity = bytes;
    auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (!p) throw std::bad_alloc();
    return p;
  }

  void give(float* data, std::size_t bytes) {
    blocks_.push_back({data, bytes});
    cached_bytes_ += bytes;
    while (cached_bytes_ > kMaxCachedBytes) {  // oldest first
      cached_bytes_ -= blocks_.front().bytes;
      std::free(blocks_.front().data);
      blocks_.erase(blocks_.begin());
    }
  }

 private:
  struct Block {
    float* data;
    std::size_t bytes;
  };
  std::vector<Block> blocks_;
  std::size_t cached_bytes_ = 0;
};

thread_local ScratchPool scratch_pool;

}  // namespace

F32Buffer::F32Buffer(std::size_t n) : size_(n) {
  const std::size_t bytes = ((n == 0 ? 1 : n) * sizeof(float) + 63) & ~std::size_t{63};
  data_ = scratch_pool.take(bytes, capacity_bytes_);
}

F32Buffer::F32Buffer(F32Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_bytes_(std::exchange(other.capacity_bytes_, 0)) {}

F32Buffer& F32Buffer::operator=(F32Buffer&& other) noexcept {
  if (this != &other) {
    if (data_) scratch_pool.give(data_, capacity_bytes_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_bytes_ = std::exchange(other.capacity_bytes_, 0);
  }
  return *this;
}

F32Buffer::~F32Buffer() {
  if (data_) scratch_pool.give(data_, capacity_bytes_);
}

F32Buffer load_f32(const kb_tensor& t) {
  F32Buffer buf(static_cast<std::size_t>(kb_numel(&t)));
  widen_to_f32(t, buf.data());
  return buf;
}

}  // namespace kbench::ops
