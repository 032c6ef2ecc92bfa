// The (B, H, S, D) query, key and value tensors of the attention-shaped workloads (1p, 5p, 15p,
// 16p): their extents, the problem and call check they share, and the (batch, head) slices the
// quadratic-form workloads (15p, 16p) hand to ops::gemm one head at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bf16.h"
#include "core/tensor.h"
#include "kbench/kernel.h"
#include "ops/attention.h"
#include "ops/gemm.h"
#include "ops/tensor_checks.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"

namespace kbench::bhsd {

struct Shape {
  std::int64_t batch, num_heads, seq_len, head_dim;
};

// The sizes of the causal attention workloads whose original runs at (B, H, S, D) =
// (4, 64, 4096, 128) (1p, 5p): cpu keeps head_dim and shortens S 4x.
inline constexpr Presets<Shape> kPresets = {
    .smoke = {2, 3, 61, 37},  // S and D prime: no tile or vector width divides them
    .cpu = {1, 8, 1024, 128},
    .full = {4, 64, 4096, 128},
};

inline std::vector<std::int64_t> dims(const Shape& s) {
  return {s.batch, s.num_heads, s.seq_len, s.head_dim};
}

// The problem over bf16 (B, H, S, D) q, k and v named `names`, each drawn from normal(), with one
// bf16 output of that shape: the config keys batch, seq_len, num_heads and head_dim, the FLOPs of
// two full S x S matmuls per head (4 B H S^2 D, the masked half included, as the originals count
// them) and the essential FLOPs of the visible pairs (each of 1p, 15p and 16p is causal, its masked
// scores exact zeros after the softmax or the decay). The caller appends its own config and
// inputs, then sets min_bytes.
inline Problem qkv_problem(const Shape& s, const std::array<std::string, 3>& names) {
  Problem problem;
  problem.config = {{"batch", s.batch},
                    {"seq_len", s.seq_len},
                    {"num_heads", s.num_heads},
                    {"head_dim", s.head_dim}};
  for (const std::string& name : names)
    problem.inputs.push_back({{name, KB_BF16, dims(s)}, InitRule::normal()});
  problem.outputs = {{"out", KB_BF16, dims(s)}};
  problem.flops = 4.0 * static_cast<double>(s.batch * s.num_heads) *
                  static_cast<double>(s.seq_len * s.seq_len * s.head_dim);
  problem.essential_flops = ops::causal_head_flops(s.batch * s.num_heads, s.seq_len, s.head_dim);
  return problem;
}

// The extents of a call with `expected_inputs` inputs and one output whose in[0..2] are bf16
// (B, H, S, D) tensors of one shape with S and D positive (and H, where `require_heads`: for a
// workload that takes a head's index as bh % H), and whose out[0] is a float tensor of that shape,
// or nullopt. The inputs after v are the caller's to check.
inline std::optional<Shape> qkv_shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                              const kb_tensor* out, std::int32_t num_outputs,
                                              std::int32_t expected_inputs,
                                              bool require_heads = false) {
  if (num_inputs != expected_inputs || num_outputs != 1 || in[0].rank != 4) return std::nullopt;
  const Shape s{in[0].shape[0], in[0].shape[1], in[0].shape[2], in[0].shape[3]};
  if (s.seq_len <= 0 || s.head_dim <= 0 || (require_heads && s.num_heads <= 0)) return std::nullopt;
  for (std::int32_t i = 0; i < 3; ++i)
    if (!ops::matches(in[i], KB_BF16, {s.batch, s.num_heads, s.seq_len, s.head_dim}))
      return std::nullopt;
  if (!ops::is_float_output(out[0], {s.batch, s.num_heads, s.seq_len, s.head_dim}))
    return std::nullopt;
  return s;
}

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
