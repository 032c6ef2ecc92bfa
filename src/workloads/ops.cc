// Baseline building blocks on OpenBLAS and Highway.
#include "workloads/ops.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "core/bf16.h"

namespace kbench::ops {

namespace hn = hwy::HWY_NAMESPACE;

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
  const auto n = static_cast<std::size_t>(kb_numel(&t));
  F32Buffer buf(n);
  switch (t.dtype) {
    case KB_BF16:
      convert_bf16_to_f32(static_cast<const bf16_t*>(t.data), buf.data(), n);
      break;
    case KB_F32:
      std::memcpy(buf.data(), t.data, n * sizeof(float));
      break;
    case KB_I32:
      for (std::size_t i = 0; i < n; ++i)
        buf.data()[i] = static_cast<float>(static_cast<const int32_t*>(t.data)[i]);
      break;
  }
  return buf;
}

void store(const float* values, kb_tensor& out) {
  const auto n = static_cast<std::size_t>(kb_numel(&out));
  if (out.dtype == KB_BF16) {
    convert_f32_to_bf16(values, static_cast<bf16_t*>(out.data), n);
  } else {
    std::memcpy(out.data, values, n * sizeof(float));
  }
}

void round_like(kb_dtype out_dtype, float* values, std::size_t n) {
  if (out_dtype != KB_BF16) return;
  for (std::size_t i = 0; i < n; ++i) values[i] = round_to_bf16(values[i]);
}

void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, bool b_transposed, float beta,
           float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

namespace {

template <class Op>
void map_inplace(float* x, std::size_t n, Op op) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(op(d, hn::LoadU(d, x + i)), d, x + i);
  if (i < n) {  // tail through a full-width temporary so the main loop never branches on edges
    HWY_ALIGN float tail[hn::MaxLanes(d)] = {};
    std::memcpy(tail, x + i, (n - i) * sizeof(float));
    hn::Store(op(d, hn::Load(d, tail)), d, tail);
    std::memcpy(x + i, tail, (n - i) * sizeof(float));
  }
}

}  // namespace

void exp_inplace(float* x, std::size_t n) {
  map_inplace(x, n, [](auto d, auto v) { return hn::Exp(d, v); });
}

void silu_inplace(float* x, std::size_t n) {
  map_inplace(x, n, [](auto d, auto v) {
    const auto one = hn::Set(d, 1.0f);
    return hn::Div(v, hn::Add(one, hn::Exp(d, hn::Neg(v))));
  });
}

}  // namespace kbench::ops
