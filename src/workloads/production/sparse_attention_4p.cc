// 4p_Sparse_Attention: the dense causal GQA reference of MaxText's splash attention kernel, as
// Llama-3.1-70B runs it.
//
// Operator  jax.vmap over batch of: G = Hq / Hkv; k, v = repeat(k, G, axis=0), repeat(v, G,
//           axis=0) (query head h reads kv head h // G); scores = einsum(q, k) with no scale (q
//           arrives pre-scaled by D^-0.5); where(tril(ones(S, S)), scores, -1e30);
//           p = softmax(scores over keys); out = einsum(p, v).
// Inputs    q  bf16 (B, Hq, S, D)   normal * D^-0.5
//           k  bf16 (B, Hkv, S, D)  normal        (the spec: normal*0.02, see Deviations)
//           v  bf16 (B, Hkv, S, D)  normal*0.02
// Output    out  bf16 (B, Hq, S, D)
// FLOPs     4*Hq*S*S*D, the spec's benchmark() formula, which omits the batch (optimized.py's
//           get_flops has 4*B*Hq*S*S*D); 549,755,813,888 at full size (B=4, Hq=64, Hkv=8,
//           S=4096, D=128).
// Essential 4*B*Hq*D*S(S+1)/2 (visible pairs, with the batch): the roofline's floor
// Character compute-bound: two GEMMs per query head around an S x S softmax; each kv head serves
//           G = 8 query heads.
// Deviations
//   - k is drawn from normal(1), not normal*0.02. With the spec's scales the scores have standard
//     deviation sqrt(D) * D^-0.5 * 0.02 = 0.02, the attention is uniform over the causal prefix to
//     within 2%, and a kernel returning the running mean of v (ignoring q and k) would pass. Unit
//     keys give the scores the unit spread q's D^-0.5 pre-scale is there to produce.
//   - v keeps normal*0.02, so outputs are ~0.02 or less, and the tolerance's atol is tied to that
//     scale: atol = 0.05 * 0.02 = 1e-3, rtol and rel-L2 1e-2 (attention::tolerance, the
//     rule of 1p on unit values). JAXBench's atol 1e-2 would admit any output within half the
//     values' spread of the oracle elementwise.
//   - q's pre-scale is D^-0.5 at every size (128^-0.5 at full and cpu size), as create_inputs
//     computes it from head_dim.
//   - The cpu preset is (B, Hq, Hkv, S, D) = (1, 8, 1, 1024, 128): G = 8, head_dim and the causal
//     mask kept, S shortened 4x. B = 1 there, so the spec's FLOP formula (without B) is exact.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/bf16.h"
#include "core/tensor.h"
#include "ops/attention.h"
#include "scaffolds.h"
#include "workloads/kit/attention.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr double kMaskedScore = -1e30;  // the original's where(mask, s, -1e30)
constexpr double kValueScale = 0.02;    // v's normal*0.02, which sets the outputs' scale

struct Shape {
  std::int64_t batch, num_query_heads, num_kv_heads, seq_len, head_dim;
};

constexpr Presets<Shape> kPresets = {
    .smoke = {2, 8, 2, 59, 37},  // S and D prime, G = 4: no tile or vector width divides them
    .cpu = {1, 8, 1, 1024, 128},
    .full = {4, 64, 8, 4096, 128},
};

Problem make_problem(Size size) {
  const auto [batch, hq, hkv, seq_len, head_dim] = kPresets.at(size);
  Problem problem;
  problem.config = {{"batch", batch},
                    {"seq_len", seq_len},
                    {"num_query_heads", hq},
                    {"num_kv_heads", hkv},
                    {"head_dim", head_dim}};
  problem.inputs = {
      {{"q", KB_BF16, {batch, hq, seq_len, head_dim}},
       InitRule::normal(1.0 / std::sqrt(static_cast<double>(head_dim)))},
      {{"k", KB_BF16, {batch, hkv, seq_len, head_dim}}, InitRule::normal(1.0)},
      {{"v", KB_BF16, {batch, hkv, seq_len, head_dim}}, InitRule::normal(kValueScale)},
  };
  problem.outputs = {{"out", KB_BF16, {batch, hq, seq_len, head_dim}}};
  problem.flops = 4.0 * static_cast<double>(hq) * static_cast<double>(seq_len * seq_len) *
                  static_cast<double>(head_dim);
  // The physical work, with the batch the spec's formula omits.
  problem.essential_flops = ops::causal_head_flops(batch * hq, seq_len, head_dim);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The call's heads, for attention::HeadPrograms.
struct Heads : attention::GqaHeads<Shape, attention::GqaLayout::kBhsd> {
  // No scale op: the original's q arrives pre-scaled.
  static ops::ScoreSteps score_steps(const Shape&) {
    return {.scale = std::nullopt, .masked_score = kMaskedScore};
  }
};

// The baseline is what a fusing compiler emits (ops::attention_baseline) per query head: blocks of
// query rows, each a GEMM for its full-width scores, one softmax pass per row while the block is in
// L2, and a GEMM with the kv head's values writing the block's output rows. The vmap over batch is
// the loop over b; the repeat of K/V is a view (h // G), as XLA fuses it into the dot's operand.
// bf16 probabilities with a bf16 output; nothing rounded in the oracle.
//
// The bf16 program is the original program's bf16 arithmetic (ops::attention_bf16_program), without
// a scale op.
using Programs = attention::HeadPrograms<Heads>;

}  // namespace

const Workload kSparseAttention4p = with_programs<Programs>({
    .name = "4p_Sparse_Attention",
    .model = "Llama-3.1-70B (MaxText splash_attention_kernel.py baseline)",
    .summary = "Causal GQA attention (vmap over batch, q pre-scaled) over bf16 (B,H,S,D)",
    .problem = make_problem,
    .tolerance = attention::tolerance(kValueScale),
    .scaffold = scaffolds::k4p_Sparse_Attention,
});

}  // namespace kbench
