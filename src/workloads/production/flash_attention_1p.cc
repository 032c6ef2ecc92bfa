// 1p_Flash_Attention: causal multi-head attention, Baseline-MHA with the Llama-3.1-70B config.
//
// Operator  scores = einsum(q, k) * D^-0.5; where(tril(ones(S, S)), scores, -1e9);
//           p = softmax(scores over keys); out = einsum(p, v). Vanilla: no GQA, softcap or window.
// Inputs    query  bf16 (B, H, S, D)  normal
//           key    bf16 (B, H, S, D)  normal
//           value  bf16 (B, H, S, D)  normal
// Output    out    bf16 (B, H, S, D)
// FLOPs     4*B*H*S*S*D, the full S x S (masked half included), as the original counts them;
//           2,199,023,255,552 at full size (B=4, H=64, S=4096, D=128).
// Essential 4*B*H*D*S(S+1)/2, the visible (query, key) pairs only: the roofline's floor
// Character compute-bound: two GEMMs per head around an S x S softmax.
// Deviations
//   - None in the operator. The cpu preset is (B, H, S, D) = (1, 8, 1024, 128): head_dim kept, the
//     causal mask kept, S shortened 4x so a single core finishes in tens of milliseconds.
//   - The spec's module docstring says seq=2048; its CONFIG (used here) says 4096.
//   - Tolerance: atol 0.05 instead of JAXBench's 1e-2 (rtol and rel-L2 stay 1e-2). The original
//     bf16 program (bf16 scores, bf16 scale multiply, bf16 softmax) misses atol 1e-2 on ~30% of
//     seeds; the widened atol accepts it at <= 0.44 of the bound, and the unchanged rel-L2 still
//     rejects the oracle plus 5% noise (attention::tolerance).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "core/tensor.h"
#include "ops/attention.h"
#include "scaffolds.h"
#include "workloads/kit/attention.h"
#include "workloads/kit/bhsd.h"
#include "workloads/kit/entry.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr double kMaskedScore = -1e9;  // the original's where(mask, s, -1e9)

using Shape = bhsd::Shape;

Problem make_problem(Size size) {
  const Shape s = bhsd::kPresets.at(size);
  Problem problem = bhsd::qkv_problem(s, {"query", "key", "value"});
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The call's heads, for attention::HeadPrograms.
struct Heads {
  // The shape of a call whose tensors match the signature above (any float output dtype), or
  // nullopt.
  static std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                            const kb_tensor* out, std::int32_t num_outputs) {
    return bhsd::qkv_shape_of_call(in, num_inputs, out, num_outputs, 3);
  }

  static std::int64_t heads_per_batch(const Shape& s) { return s.num_heads; }

  static constexpr auto head = attention::bhsd_head;

  static ops::ScoreSteps score_steps(const Shape& s) {
    return attention::scaled_score_steps(s.head_dim, kMaskedScore);
  }
};

// The baseline is what a fusing compiler emits for the original, one (batch, head) at a time
// (ops::attention_baseline): blocks of query rows, each a GEMM for its full-width scores with
// the D^-0.5 scale fused into it, one softmax pass per row while the block is in L2, and a GEMM
// with value writing the block's output rows. With a bf16 output the probabilities (the second
// GEMM's operand) are stored in bf16, as the program's bf16 tensor is; with an f32 output (the
// oracle) nothing is rounded. The scores stay f32, as an einsum with f32 accumulation fused
// into its softmax consumer keeps them: a literal bf16 scores tensor (|q.k| ~ 11, bf16 step
// 1/16) moves the exponents by up to ~0.03, which at cpu size put this baseline's worst element
// at 95% of the JAXBench allclose bound against the oracle (40% with f32 scores).
//
// The bf16 program is the original program's bf16 arithmetic (ops::attention_bf16_program): bf16
// scores, the bf16 scale multiply, the bf16 softmax, the bf16 output einsum.
using Programs = attention::HeadPrograms<Heads>;

}  // namespace

const Workload kFlashAttention1p = with_programs<Programs>({
    .name = "1p_Flash_Attention",
    .model = "Baseline-MHA (CONFIG.model); README lists Llama-3.1-70B; optimized.py CONFIG.model = "
             "Llama-3.1-70B",
    .summary = "Causal multi-head attention softmax(q k^T / sqrt(D)) v over bf16 (B,H,S,D)",
    .problem = make_problem,
    // atol 0.05 (values have unit scale), rtol 1e-2, rel-L2 1e-2: the original bf16 program fails
    // JAXBench's atol 1e-2 on ~30% of seeds; formula and measurements at attention::tolerance.
    .tolerance = attention::tolerance(1.0),
    .scaffold = scaffolds::k1p_Flash_Attention,
});

}  // namespace kbench
