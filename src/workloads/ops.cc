// Baseline building blocks on OpenBLAS and Highway.
#include "workloads/ops.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include "core/bf16.h"

namespace kbench::ops {

namespace hn = hwy::HWY_NAMESPACE;

void F32Buffer::FreeDeleter::operator()(float* p) const { std::free(p); }

F32Buffer::F32Buffer(std::size_t n) : size_(n) {
  const std::size_t bytes = ((n == 0 ? 1 : n) * sizeof(float) + 63) & ~std::size_t{63};
  data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!data_) throw std::bad_alloc();
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
      for (std::size_t i = 0; i < n; ++i) buf.data()[i] = static_cast<float>(static_cast<const int32_t*>(t.data)[i]);
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

void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
           const float* b, std::int64_t ldb, bool b_transposed, float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
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
