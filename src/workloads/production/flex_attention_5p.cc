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
//     scale: atol = 0.05 * 0.02 = 1e-3, rtol and rel-L2 1e-2 (attention::tolerance, the
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
#include "ops/attention.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/attention.h"
#include "workloads/kit/bhsd.h"
#include "workloads/kit/entry.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr double kMaskedScore = -1e30;  // the original's where(mask, s, -1e30)
constexpr double kValueScale = 0.02;    // v's normal*0.02, which sets the outputs' scale
constexpr double kBiasScale = 0.5;      // see Deviations

using Shape = bhsd::Shape;

Problem make_problem(Size size) {
  const auto [batch, heads, seq_len, head_dim] = bhsd::kPresets.at(size);
  const std::vector<std::int64_t> dims = bhsd::dims({batch, heads, seq_len, head_dim});
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
  const double visible = static_cast<double>(batch * heads) * ops::causal_pairs(seq_len, seq_len);
  problem.essential_flops = 4.0 * visible * static_cast<double>(head_dim) + visible;
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The call's heads, for attention::HeadPrograms.
struct Heads {
  // The extents of a call whose tensors match the signature above (any float output dtype), or
  // nullopt.
  static std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                            const kb_tensor* out, std::int32_t num_outputs) {
    const auto s = bhsd::qkv_shape_of_call(in, num_inputs, out, num_outputs, 4);
    if (!s || !ops::matches(in[3], KB_BF16, {s->num_heads, s->seq_len, s->seq_len}))
      return std::nullopt;
    return s;
  }

  static std::int64_t heads_per_batch(const Shape& s) { return s.num_heads; }

  // Head h of batch b: dense S x D matrices and the head's S x S bias.
  static ops::HeadView head(const kb_tensor* in, kb_tensor* out, const Shape& s, std::int64_t b,
                            std::int64_t h) {
    ops::HeadView head = attention::bhsd_head(in, out, s, b, h);
    head.bias = static_cast<const bf16_t*>(in[3].data) + h * s.seq_len * s.seq_len;
    return head;
  }

  static ops::ScoreSteps score_steps(const Shape& s) {
    return attention::scaled_score_steps(s.head_dim, kMaskedScore);
  }
};

// The baseline is what a fusing compiler emits (ops::attention_baseline) per head: blocks of query
// rows, each a GEMM for its full-width scores with the D^-0.5 scale fused into it, then per row the
// bias added in the softmax pass (the score_mod fused into its consumer) while the block is in L2,
// and a GEMM with v writing the block's output rows. bf16 probabilities with a bf16 output;
// nothing rounded in the oracle.
//
// The bf16 program is the original program's bf16 arithmetic (ops::attention_bf16_program): bf16
// scores, the bf16 scale multiply, the bf16 bias add, the bf16 softmax, the bf16 output matmul.
using Programs = attention::HeadPrograms<Heads>;

}  // namespace

const Workload kFlexAttention5p = with_programs<Programs>({
    .name = "5p_Flex_Attention",
    .model = "Llama-3.1-70B (MaxText attention_op.py)",
    .summary = "Causal multi-head attention with an additive (H,S,S) relative-position bias, bf16",
    .problem = make_problem,
    .tolerance = attention::tolerance(kValueScale),
    .scaffold = scaffolds::k5p_Flex_Attention,
});

}  // namespace kbench
