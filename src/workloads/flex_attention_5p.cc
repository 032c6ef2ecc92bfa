// 5p_Flex_Attention: causal multi-head attention with a score_mod, Llama-3.1-70B (MaxText
// attention_op.py): an additive per-head relative-position bias.
//
// Operator  scores = einsum(q, k) * D^-0.5 + rel_pos_bias[h]; where(tril(ones(S, S)), scores,
//           -1e30); p = softmax(scores over keys); out = p @ v.
// Inputs    q             bf16 (B, H, S, D)  normal
//           k             bf16 (B, H, S, D)  normal        (the spec: normal*0.02, see Deviations)
//           v             bf16 (B, H, S, D)  normal*0.02
//           rel_pos_bias  bf16 (H, S, S)     normal*0.5    (the spec: normal*0.01, see Deviations)
// Output    out  bf16 (B, H, S, D)
// FLOPs     4*B*H*S*S*D + B*H*S*S (the bias add), the full S x S (masked half included);
//           2,203,318,222,848 at full size (B=4, H=64, S=4096, D=128).
// Essential (4*D + 1)*B*H*S(S+1)/2, the visible pairs only: the roofline's floor
// Character compute-bound: two GEMMs per head around an S x S softmax, plus an (H, S, S) bias read
//           once per batch (2 GiB in bf16 at full size, more bytes than q, k, v and out together).
// Deviations
//   - k is drawn from normal(1), not normal*0.02. With the spec's scales the scores have standard
//     deviation sqrt(D) * 0.02 * D^-0.5 = 0.02 (plus the bias's 0.01), the attention is uniform
//     over the causal prefix to within ~3%, and a kernel returning the running mean of v would
//     pass. Unit keys give the scores unit spread.
//   - rel_pos_bias is drawn from normal*0.5, not normal*0.01: next to unit-spread scores a 0.01
//     bias moves the probabilities by ~1% and a kernel ignoring it would pass; at 0.5 it is
//     comparable with the scores, as a learned relative-position bias is, and dropping it fails.
//   - v keeps normal*0.02, so outputs are ~0.02 or less, and the tolerance's atol is tied to that
//     scale: atol = 0.05 * 0.02 = 1e-3, rtol and rel-L2 1e-2 (attention::attention_tolerance, the
//     rule of 1p on unit values). JAXBench's atol 1e-2 would admit any output within half the
//     values' spread of the oracle elementwise.
//   - The cpu preset is (B, H, S, D) = (1, 8, 1024, 128): head_dim and the causal mask kept, S
//     shortened 4x (the bias shrinks 16x per head, to 2 MiB).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "core/tensor.h"
#include "workloads/attention_ops.h"
#include "workloads/matmul_ops.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

constexpr double kMaskedScore = -1e30;  // the original's where(mask, s, -1e30)
constexpr double kValueScale = 0.02;    // v's normal*0.02, which sets the outputs' scale
constexpr double kBiasScale = 0.5;      // see Deviations

struct Shape {
  std::int64_t batch, num_heads, seq_len, head_dim;
};

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {2, 3, 61, 37};  // S and D prime: no tile or vector width divides them
    case Size::kCpu:
      return {1, 8, 1024, 128};
    case Size::kFull:
      break;
  }
  return {4, 64, 4096, 128};
}

Problem make_problem(Size size) {
  const auto [batch, heads, seq_len, head_dim] = shape_of(size);
  const std::vector<std::int64_t> dims = {batch, heads, seq_len, head_dim};
  Problem problem;
  problem.config = {
      {"batch", batch}, {"seq_len", seq_len}, {"num_heads", heads}, {"head_dim", head_dim}};
  problem.inputs = {
      {{"q", KB_BF16, dims}, InitRule::normal(1.0)},
      {{"k", KB_BF16, dims}, InitRule::normal(1.0)},
      {{"v", KB_BF16, dims}, InitRule::normal(kValueScale)},
      {{"rel_pos_bias", KB_BF16, {heads, seq_len, seq_len}}, InitRule::normal(kBiasScale)},
  };
  problem.outputs = {{"out", KB_BF16, dims}};
  const double scores = static_cast<double>(batch * heads) * static_cast<double>(seq_len * seq_len);
  problem.flops = 4.0 * scores * static_cast<double>(head_dim) + scores;
  const double visible =
      static_cast<double>(batch * heads) * attention::causal_pairs(seq_len, seq_len);
  problem.essential_flops = 4.0 * visible * static_cast<double>(head_dim) + visible;
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype), or
// nullopt.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 4 || num_outputs != 1 || in[0].rank != 4) return std::nullopt;
  const Shape s{in[0].shape[0], in[0].shape[1], in[0].shape[2], in[0].shape[3]};
  if (s.seq_len <= 0 || s.head_dim <= 0) return std::nullopt;
  for (std::int32_t i = 0; i < 3; ++i)
    if (!ops::matches(in[i], KB_BF16, {s.batch, s.num_heads, s.seq_len, s.head_dim}))
      return std::nullopt;
  if (!ops::matches(in[3], KB_BF16, {s.num_heads, s.seq_len, s.seq_len}) ||
      !ops::is_float_output(out[0], {s.batch, s.num_heads, s.seq_len, s.head_dim}))
    return std::nullopt;
  return s;
}

// Head h of batch b: dense S x D matrices and the head's S x S bias.
attention::HeadView head_of(const kb_tensor* in, kb_tensor* out, const Shape& s, std::int64_t b,
                            std::int64_t h) {
  const std::int64_t offset = (b * s.num_heads + h) * s.seq_len * s.head_dim;
  const std::size_t out_element = dtype_size(out[0].dtype);
  return {.q = static_cast<const bf16_t*>(in[0].data) + offset,
          .q_ld = s.head_dim,
          .k = static_cast<const bf16_t*>(in[1].data) + offset,
          .k_ld = s.head_dim,
          .v = static_cast<const bf16_t*>(in[2].data) + offset,
          .v_ld = s.head_dim,
          .bias = static_cast<const bf16_t*>(in[3].data) + h * s.seq_len * s.seq_len,
          .out = static_cast<char*>(out[0].data) + static_cast<std::size_t>(offset) * out_element,
          .out_dtype = out[0].dtype,
          .out_ld = s.head_dim};
}

template <typename PerHead>
int for_each_head(const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
                  std::int32_t num_outputs, std::optional<kb_dtype> required_out,
                  PerHead per_head) {
  const std::optional<Shape> shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape || (required_out && out[0].dtype != *required_out)) return 1;
  const attention::ScoreSteps steps = {
      .scale = 1.0 / std::sqrt(static_cast<double>(shape->head_dim)), .masked_score = kMaskedScore};
  for (std::int64_t b = 0; b < shape->batch; ++b)
    for (std::int64_t h = 0; h < shape->num_heads; ++h)
      per_head(head_of(in, out, *shape, b, h), shape->seq_len, shape->head_dim, steps);
  return 0;
}

int reference(const kb_config*, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
              std::int32_t num_outputs) {
  return for_each_head(in, num_inputs, out, num_outputs, KB_F32, attention::reference_head);
}

// What a fusing compiler emits (attention::baseline_head) per head: blocks of query rows, each a
// GEMM for its full-width scores with the D^-0.5 scale fused into it, then per row the bias added
// in the softmax pass (the score_mod fused into its consumer) while the block is in L2, and a GEMM
// with v writing the block's output rows. bf16 probabilities with a bf16 output; nothing rounded in
// the oracle.
int baseline(const kb_config*, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  return for_each_head(in, num_inputs, out, num_outputs, std::nullopt,
                       [](const attention::HeadView& head, std::int64_t seq_len,
                          std::int64_t head_dim, const attention::ScoreSteps& steps) {
                         attention::baseline_head(head, seq_len, head_dim, steps);
                       });
}

// The original program's bf16 arithmetic (attention::bf16_program_head): bf16 scores, the bf16
// scale multiply, the bf16 bias add, the bf16 softmax, the bf16 output matmul.
int bf16_program(const kb_config*, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
                 std::int32_t num_outputs) {
  return for_each_head(in, num_inputs, out, num_outputs, KB_BF16, attention::bf16_program_head);
}

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kFlexAttention5p;
const Workload kFlexAttention5p = {
    .id = "5p",
    .name = "5p_Flex_Attention",
    .group = Group::kProduction,
    .source_model = "Llama-3.1-70B (MaxText attention_op.py)",
    .summary = "Causal multi-head attention with an additive (H,S,S) relative-position bias, bf16",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    .tolerance = attention::attention_tolerance(kValueScale),
    .bf16_program = bf16_program,
};

}  // namespace kbench
