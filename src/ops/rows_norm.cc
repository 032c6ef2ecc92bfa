// Row normalizations and in-place activations on Highway (static dispatch, see rows.h). Each loop
// runs whole vectors and finishes with one masked vector (MaskedLoad zero-fills the lanes past the
// end, BlendedStore leaves them untouched), so the tail computes the same lane arithmetic as the
// body.
#include "ops/rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "core/bf16.h"
#include "ops/xla_tanh-inl.h"

namespace kbench::ops {

namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// exp(-v) overflows Highway's Exp past +104; sigmoid(v) is 0 in f32 well before -88.
constexpr float kMaxExpArgument = 88.0f;

// Applies `op(v, i)` (a vector of x[i .. i + lanes) and its offset i) to every element of x in
// place: whole vectors, then one masked vector for the tail.
template <class Op>
void map_inplace(float* x, std::size_t n, const Op& op) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(op(hn::LoadU(df, x + i), i), df, x + i);
  if (i < n) {
    const auto mask = hn::FirstN(df, n - i);
    hn::BlendedStore(op(hn::MaskedLoad(mask, df, x + i), i), mask, df, x + i);
  }
}

// The lanes of p[i .. i + lanes) (zero past n): for operands indexed like x inside map_inplace.
VF load_at(const float* p, std::size_t i, std::size_t n) {
  const DF df;
  if (i + hn::Lanes(df) <= n) return hn::LoadU(df, p + i);
  return hn::MaskedLoad(hn::FirstN(df, n - i), df, p + i);
}

VF sigmoid_times(DF df, VF v) {
  const VF e = hn::Exp(df, hn::Min(hn::Neg(v), hn::Set(df, kMaxExpArgument)));
  return hn::Div(v, hn::Add(hn::Set(df, 1.0f), e));  // v * sigmoid(v) = v / (1 + exp(-v))
}

}  // namespace

float centered_sum_of_squares(const float* x, std::size_t n, float mean) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  const VF m = hn::Set(df, mean);
  VF acc = hn::Zero(df);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF d = hn::Sub(hn::LoadU(df, x + i), m);
    acc = hn::MulAdd(d, d, acc);
  }
  if (i < n) {
    const auto mask = hn::FirstN(df, n - i);
    // Masked-off lanes must add nothing: zero the difference, not the value.
    const VF d = hn::IfThenElseZero(mask, hn::Sub(hn::MaskedLoad(mask, df, x + i), m));
    acc = hn::MulAdd(d, d, acc);
  }
  return hn::GetLane(hn::SumOfLanes(df, acc));
}

void group_norm(float* x, std::size_t n, std::size_t group_size, float eps, const float* pre_bias,
                const float* weight, const float* shift) {
  const DF df;
  if (pre_bias != nullptr)
    map_inplace(x, n, [&](VF v, std::size_t i) { return hn::Add(v, load_at(pre_bias, i, n)); });
  const auto inverse_size = 1.0f / static_cast<float>(group_size);
  for (std::size_t g = 0; g < n; g += group_size) {
    float* group = x + g;
    const float mean = sum(group, group_size) * inverse_size;
    const float var = centered_sum_of_squares(group, group_size, mean) * inverse_size;
    const VF m = hn::Set(df, mean);
    const VF inv_std = hn::Set(df, 1.0f / std::sqrt(var + eps));
    const float* w = weight + g;
    const float* s = shift + g;
    map_inplace(group, group_size, [&](VF v, std::size_t i) {
      const VF normalized = hn::Mul(hn::Sub(v, m), inv_std);
      return hn::MulAdd(normalized, load_at(w, i, group_size), load_at(s, i, group_size));
    });
  }
}

void softmax(float* x, std::size_t n) {
  const float max = max_value(x, n);
  const float total = exp_inplace_sum(x, n, max);
  scale_inplace(x, n, 1.0f / total);
}

void prefix_softmax(float* x, std::size_t visible, std::size_t width) {
  if (visible == 0) {
    std::fill(x, x + width, 1.0f / static_cast<float>(width));
    return;
  }
  softmax(x, visible);
  std::fill(x + visible, x + width, 0.0f);
}

void scale_shift(float* x, const float* scale, const float* shift, std::size_t n) {
  map_inplace(x, n, [&](VF v, std::size_t i) {
    return hn::MulAdd(v, load_at(scale, i, n), load_at(shift, i, n));
  });
}

void column_mean_var(const float* y, std::size_t rows, std::size_t cols, float* mean, float* var) {
  std::fill(mean, mean + cols, 0.0f);
  std::fill(var, var + cols, 0.0f);
  // Row by row, each column accumulating in its own lane: reads y in memory order.
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = y + r * cols;
    map_inplace(mean, cols,
                [&](VF acc, std::size_t j) { return hn::Add(acc, load_at(row, j, cols)); });
  }
  const float inverse_rows = 1.0f / static_cast<float>(rows);
  scale_inplace(mean, cols, inverse_rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = y + r * cols;
    map_inplace(var, cols, [&](VF acc, std::size_t j) {
      const VF d = hn::Sub(load_at(row, j, cols), load_at(mean, j, cols));
      return hn::MulAdd(d, d, acc);
    });
  }
  scale_inplace(var, cols, inverse_rows);
}

void gelu_tanh_relu(float* x, std::size_t n) {
  const DF df;
  map_inplace(x, n, [&](VF v, std::size_t) { return hn::ZeroIfNegative(gelu_tanh_lanes(df, v)); });
}

void gelu_tanh(float* x, std::size_t n) {
  const DF df;
  map_inplace(x, n, [&](VF v, std::size_t) { return gelu_tanh_lanes(df, v); });
}

void silu_multiply_silu(float* x, const float* multiplier, std::size_t n) {
  const DF df;
  map_inplace(x, n, [&](VF v, std::size_t i) {
    return sigmoid_times(df, hn::Mul(sigmoid_times(df, v), load_at(multiplier, i, n)));
  });
}

void store_row(const float* x, std::size_t n, kb_tensor& out, std::size_t offset) {
  if (out.dtype == KB_BF16) {
    convert_f32_to_bf16(x, static_cast<bf16_t*>(out.data) + offset, n);
  } else {
    std::memcpy(static_cast<float*>(out.data) + offset, x, n * sizeof(float));
  }
}

}  // namespace kbench::ops
