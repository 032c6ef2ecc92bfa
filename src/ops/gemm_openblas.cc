// The OpenBLAS path (widen, sgemm per block of rows, fused epilogue per block) and the epilogue
// every non-native path shares.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm_paths.h"
#include "ops/rows.h"
#include "ops/xla_tanh-inl.h"

namespace kbench::ops::detail {
namespace hn = hwy::HWY_NAMESPACE;
namespace {

template <class D, class V>
V activate(D d, V v, Activation activation);

}  // namespace

F32Buffer widen(const Matrix& m) {
  F32Buffer out(static_cast<std::size_t>(m.rows * m.cols));
  // Across the thread budget: on one thread this copy is ~3% of a widened GEMM, and left serial it
  // would cap the call's scaling with threads.
#pragma omp parallel for schedule(static) if (m.rows * m.cols >= kParallelElements)
  for (std::int64_t r = 0; r < m.rows; ++r) {
    float* dst = out.data() + r * m.cols;
    if (m.dtype == KB_BF16)
      convert_bf16_to_f32(static_cast<const bf16_t*>(m.data) + r * m.ld, dst,
                          static_cast<std::size_t>(m.cols));
    else
      std::memcpy(dst, static_cast<const float*>(m.data) + r * m.ld,
                  static_cast<std::size_t>(m.cols) * sizeof(float));
  }
  return out;
}

namespace {

// exp(-v), with -v capped at 88 (exp(88) ~ 1.7e38 is still finite in f32): Highway's Exp is valid
// only up to +104, and 1 / (1 + exp(88)) is already 0 to within 1e-38.
template <class D, class V>
V exp_of_negated(D d, V v) {
  return hn::Exp(d, hn::Min(hn::Neg(v), hn::Set(d, 88.0f)));
}

template <class D, class V>
V activate(D d, V v, Activation activation) {
  switch (activation) {
    case Activation::kNone:
      return v;
    case Activation::kRelu:
      // Keeps NaN (a NaN lane compares false), as jax.nn.relu does.
      return hn::IfThenElse(hn::Lt(v, hn::Zero(d)), hn::Zero(d), v);
    case Activation::kSilu:
      return hn::Div(v, hn::Add(hn::Set(d, 1.0f), exp_of_negated(d, v)));
    case Activation::kGeluTanh:
      return gelu_tanh_lanes(d, v);
    case Activation::kTanh:
      return xla_tanh(d, v);
    case Activation::kMish: {
      // softplus(x) = log1p(exp(x)), taken as x itself above 20, where the two agree in f32 and
      // exp would overflow.
      const auto large = hn::Gt(v, hn::Set(d, 20.0f));
      const V softplus =
          hn::IfThenElse(large, v, hn::Log1p(d, hn::Exp(d, hn::Min(v, hn::Set(d, 20.0f)))));
      return hn::Mul(v, xla_tanh(d, softplus));
    }
    case Activation::kSigmoid:
      return hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), exp_of_negated(d, v)));
    case Activation::kGeluErf:
      break;  // not reached: epilogue_row runs GELU-erf rows in scalar code
  }
  return v;
}

float activate(float v, Activation activation) {
  switch (activation) {
    case Activation::kNone:
      break;
    case Activation::kRelu:
      return v < 0.0f ? 0.0f : v;
    case Activation::kSilu:
      return v / (1.0f + std::exp(-v));
    case Activation::kGeluTanh:
      return 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    case Activation::kGeluErf:
      return 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f));
    case Activation::kTanh:
      return std::tanh(v);
    case Activation::kMish:
      return v * std::tanh(v > 20.0f ? v : std::log1p(std::exp(v)));
    case Activation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-v));
  }
  return v;
}

template <class D, class V>
V binary(D /*d*/, V v, BinaryOp op, V operand) {
  switch (op) {
    case BinaryOp::kAdd:
      return hn::Add(v, operand);
    case BinaryOp::kSubtract:
      return hn::Sub(v, operand);
    case BinaryOp::kMultiply:
      return hn::Mul(v, operand);
    case BinaryOp::kDivide:
      break;
  }
  return hn::Div(v, operand);
}

float binary(float v, BinaryOp op, float operand) {
  switch (op) {
    case BinaryOp::kAdd:
      return v + operand;
    case BinaryOp::kSubtract:
      return v - operand;
    case BinaryOp::kMultiply:
      return v * operand;
    case BinaryOp::kDivide:
      break;
  }
  return v / operand;
}

// One post-op on the lanes of columns [c, c + lanes).
template <class D, class V>
V post_op(D d, V v, const PostOp& op, std::int64_t c) {
  switch (op.kind) {
    case PostOp::Kind::kActivation:
      return activate(d, v, op.activation);
    case PostOp::Kind::kLinear:
      return hn::MulAdd(hn::Set(d, op.alpha), v, hn::Set(d, op.beta));
    case PostOp::Kind::kClip:
      return hn::Min(hn::Max(v, hn::Set(d, op.alpha)), hn::Set(d, op.beta));
    case PostOp::Kind::kLeakyRelu:
      return hn::IfThenElse(hn::Lt(v, hn::Zero(d)), hn::Mul(v, hn::Set(d, op.alpha)), v);
    case PostOp::Kind::kScalar:
      return binary(d, v, op.op, hn::Set(d, op.alpha));
    case PostOp::Kind::kColumn:
      break;
  }
  return binary(d, v, op.op, hn::LoadU(d, op.values + c));
}

float post_op(float v, const PostOp& op, std::int64_t c) {
  switch (op.kind) {
    case PostOp::Kind::kActivation:
      return activate(v, op.activation);
    case PostOp::Kind::kLinear:
      return std::fma(op.alpha, v, op.beta);
    case PostOp::Kind::kClip:
      return std::min(std::max(v, op.alpha), op.beta);
    case PostOp::Kind::kLeakyRelu:
      return v < 0.0f ? v * op.alpha : v;
    case PostOp::Kind::kScalar:
      return binary(v, op.op, op.alpha);
    case PostOp::Kind::kColumn:
      break;
  }
  return binary(v, op.op, op.values[c]);
}

bool has_gelu_erf(const Epilogue& epilogue) {
  if (epilogue.activation == Activation::kGeluErf) return true;
  for (const PostOp& op : epilogue.post_ops)
    if (op.kind == PostOp::Kind::kActivation && op.activation == Activation::kGeluErf) return true;
  return false;
}

void epilogue_row(float* __restrict y, std::int64_t row, std::int64_t cols,
                  const Epilogue& epilogue) {
  const hn::ScalableTag<float> d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const float* mult = nullptr;
  if (epilogue.multiplier && epilogue.multiplier->dtype == KB_F32)
    mult = static_cast<const float*>(epilogue.multiplier->data) + row * epilogue.multiplier->ld;
  const bf16_t* mult_bf16 = nullptr;
  if (epilogue.multiplier && epilogue.multiplier->dtype == KB_BF16)
    mult_bf16 =
        static_cast<const bf16_t*>(epilogue.multiplier->data) + row * epilogue.multiplier->ld;
  // A bf16 multiplier is widened into this row first, so the chain after it runs in one pass.
  thread_local std::vector<float> mult_row;
  if (mult_bf16) {
    mult_row.resize(static_cast<std::size_t>(cols));
    convert_bf16_to_f32(mult_bf16, mult_row.data(), static_cast<std::size_t>(cols));
    mult = mult_row.data();
  }
  const auto alpha = hn::Set(d, epilogue.alpha);
  // No vector erf in this Highway: GELU-erf rows take the scalar loop whole.
  const std::int64_t vector_end = has_gelu_erf(epilogue) ? 0 : cols;
  std::int64_t c = 0;
  for (; c + lanes <= vector_end; c += lanes) {
    auto v = hn::Mul(hn::LoadU(d, y + c), alpha);
    if (epilogue.bias) v = hn::Add(v, hn::LoadU(d, epilogue.bias + c));
    v = activate(d, v, epilogue.activation);
    if (mult) v = hn::Mul(v, hn::LoadU(d, mult + c));
    for (const PostOp& op : epilogue.post_ops) v = post_op(d, v, op, c);
    hn::StoreU(v, d, y + c);
  }
  for (; c < cols; ++c) {  // the ragged tail, scalar with the same operations in the same order
    float v = y[c] * epilogue.alpha;
    if (epilogue.bias) v += epilogue.bias[c];
    v = activate(v, epilogue.activation);
    if (mult) v *= mult[c];
    for (const PostOp& op : epilogue.post_ops) v = post_op(v, op, c);
    y[c] = v;
  }
}

}  // namespace

int gemm_threads() {
  return omp_get_max_threads();
}

void apply_epilogue_and_store(float* values, std::int64_t ld, std::int64_t row0, std::int64_t rows,
                              const Epilogue& epilogue, const MutableMatrix& c) {
#pragma omp parallel for schedule(static) if (rows * c.cols >= kParallelElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    float* y = values + r * ld;
    epilogue_row(y, row0 + r, c.cols, epilogue);
    if (epilogue.round_to_bf16 && c.dtype != KB_BF16)
      round_to_bf16_inplace(y, static_cast<std::size_t>(c.cols));
    if (c.dtype == KB_BF16)
      convert_f32_to_bf16(y, static_cast<bf16_t*>(c.data) + (row0 + r) * c.ld,
                          static_cast<std::size_t>(c.cols));
    else
      std::memcpy(static_cast<float*>(c.data) + (row0 + r) * c.ld, y,
                  static_cast<std::size_t>(c.cols) * sizeof(float));
  }
}

void in_row_blocks(const MutableMatrix& c, const Epilogue& epilogue,
                   const std::function<void(std::int64_t row0, std::int64_t rows, float* product)>&
                       block_product) {
  const std::int64_t m = c.rows, n = c.cols;
  // Blocks of rows whose f32 product is up to 16 MiB, at least 512 rows: sgemm packs B afresh on
  // every call, which at L2-sized blocks cost more than the cache misses it saved (on an Ice Lake
  // core, 768x1536x1536 in 170-row blocks took 45.6 ms against 34.1 ms in one call; 768x768x2688
  // in 97-row blocks 49.4 against 28.0 ms). The epilogue then reads its block back from L3 or
  // memory, about 1 ms for 4.7 MB.
  const std::int64_t block = std::min<std::int64_t>(
      m, std::max<std::int64_t>(512, (1 << 22) / std::max<std::int64_t>(n, 1)));
  F32Buffer tile(static_cast<std::size_t>(block * n));
  for (std::int64_t row0 = 0; row0 < m; row0 += block) {
    const std::int64_t rows = std::min(block, m - row0);
    block_product(row0, rows, tile.data());
    apply_epilogue_and_store(tile.data(), n, row0, rows, epilogue, c);
  }
}

bool openblas_gemm(const Matrix& a, const Matrix& b, bool b_transposed, const MutableMatrix& c,
                   const Epilogue& epilogue) {
  const F32Buffer a32 = widen(a);
  const F32Buffer b32 = widen(b);
  const std::int64_t n = c.cols, k = a.cols;
  in_row_blocks(c, epilogue, [&](std::int64_t row0, std::int64_t rows, float* product) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(rows), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f,
                a32.data() + row0 * k, static_cast<blasint>(k), b32.data(),
                static_cast<blasint>(b_transposed ? k : n), 0.0f, product, static_cast<blasint>(n));
  });
  return true;
}

}  // namespace kbench::ops::detail
