// The (batch, head) slices of (B, H, S, D) tensors that the quadratic-form workloads (15p, 16p)
// hand to ops::gemm one head at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bf16.h"
#include "core/tensor.h"
#include "kbench/kernel.h"
#include "ops/gemm.h"

namespace kbench::bhsd {

// Slice bh = b * H + h of a bf16 (B, H, S, D) tensor as an S x D matrix; Shape has seq_len and
// head_dim.
template <class Shape>
ops::Matrix head_of(const kb_tensor& t, std::int64_t bh, const Shape& s) {
  return {static_cast<const bf16_t*>(t.data) + bh * s.seq_len * s.head_dim, KB_BF16, s.seq_len,
          s.head_dim, s.head_dim};
}

// The same slice of an output in its own dtype (bf16, or f32 for the oracle).
template <class Shape>
ops::MutableMatrix head_of_output(kb_tensor& t, std::int64_t bh, const Shape& s) {
  return {static_cast<char*>(t.data) +
              static_cast<std::size_t>(bh * s.seq_len * s.head_dim) * dtype_size(t.dtype),
          t.dtype, s.seq_len, s.head_dim, s.head_dim};
}

}  // namespace kbench::bhsd
