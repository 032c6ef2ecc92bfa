// 16p_Mamba2_SSD: the state-space-duality (quadratic, matrix) form of Mamba-2's core, Mamba-2-2.7B
// (Dao & Gu 2024).
//
// Operator  a = sigmoid(A_log); c = cumsum(log(a + 1e-8)) over S; L[i, j] = exp(c[i] - c[j]) for
//           i >= j, else exp(-1e30) = 0; scores = (C B^T in f32) * L; r = sum_j scores[i, j]
//           (r = 1 where |r| < 1e-6); scores /= max(|r|, 1); out = bf16(scores) @ x.
// Inputs    query (C)  bf16 (B, H, S, D)  normal
//           key (B)    bf16 (B, H, S, D)  normal
//           value (x)  bf16 (B, H, S, D)  normal
//           A_log      f32  (B, H, S)     normal*0.5+4.0 (the spec's normal*0.5-4.0: see below)
// Output    out        bf16 (B, H, S, D)
// FLOPs     2*B*H*S*S*D*2, the full S x S of both matmuls (masked half included), as the original
//           counts them; 1,099,511,627,776 at full size (B=4, H=64, S=4096, D=64).
// Essential 4*B*H*D*S(S+1)/2, the visible pairs only (L is 0 above the diagonal, so a kernel may
//           skip those scores): the roofline's floor.
// Character compute-bound and causal-quadratic: two GEMMs per head around an S x S pass that
//           exponentiates the cumulative log decay, applies it, normalizes by the signed row sum.
// Deviations
//   - A_log is drawn from normal*0.5 + 4.0, not the spec's normal*0.5 - 4.0 (non-degeneracy). With
//     mean -4, a = sigmoid(A_log) ~ 0.018: L[i, i-1] ~ 0.018, L[i, i-2] ~ 3e-4, so each output is
//     its own token's x times sign(c.b) plus a trace of the previous token's. Measured in double
//     at the cpu shape (one seed): a kernel that computes only the diagonals j in {i-2, i-1, i}
//     (O(S D) work in place of O(S^2 D)) matches the full program to relative L2 4.9e-5 with every
//     element inside the allclose bound, so a banded kernel would pass the quadratic workload.
//     With the mean's sign flipped, a ~ 0.98 (decay ~2% per token, a half-life of ~35 tokens): the
//     same banded shortcut needs the nearest 448 of the 1024 keys (384 give relative L2 5.4e-3 and
//     361 elements outside allclose), i.e. ~70% of the causal triangle; the output depends on the
//     long prefix, as an SSM's does. The spread (0.5) is the spec's.
//   - The tolerance's atol is 0.5 (JAXBench's 1e-2 otherwise): with decay that reaches back ~50
//     tokens, rows whose signed sum is near 0 keep unnormalized weights ~8 each, and a faithful
//     port's bf16 weights err by up to ~0.27 on such rows' near-zero outputs (see the tolerance).
//   - CONFIG d_state = 128 and d_model = 2560 are unused, as in the original. A_log is f32 whatever
//     the dtype, as in the original.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "core/tensor.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/rows.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/bhsd.h"
#include "workloads/kit/decayed_scores.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr double kLogEpsilon = 1e-8;  // the original's log(a + 1e-8)
constexpr double kTinySum = 1e-6;     // the original's where(|sum| < 1e-6, 1, sum)

using Shape = bhsd::Shape;

constexpr std::int64_t kDState = 128;   // config_full.d_state (unused)
constexpr std::int64_t kDModel = 2560;  // config_full.d_model (unused)

constexpr Presets<Shape> kPresets = {
    .smoke = {2, 3, 61, 37},  // S and D prime: no tile or vector width divides them
    .cpu = {1, 16, 1024, 64},
    .full = {4, 64, 4096, 64},
};

Problem make_problem(Size size) {
  const Shape s = kPresets.at(size);
  Problem problem = bhsd::qkv_problem(s, {"query (C)", "key (B)", "value (x)"});
  // d_state and d_model are unused by the program (its quadratic form contracts over head_dim)
  // and no shape implies them: the spec's values at every size.
  problem.config.push_back({"d_state", kDState});
  problem.config.push_back({"d_model", kDModel});
  problem.inputs.push_back(
      {{"A_log", KB_F32, {s.batch, s.num_heads, s.seq_len}}, InitRule::normal(0.5, 4.0)});
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The shape of a call whose tensors match the signature above (any float output dtype), or nullopt.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  const auto s = bhsd::qkv_shape_of_call(in, num_inputs, out, num_outputs, 4);
  if (!s || !ops::matches(in[3], KB_F32, {s->batch, s->num_heads, s->seq_len})) return std::nullopt;
  return s;
}

// The original's row norm: max(|r|, 1) of the signed row sum r of the scores, with r = 1 where
// |r| < 1e-6; in double for the reference, in f32 for the bf16 program.
template <class T>
T row_norm(const T* scores, std::int64_t keys) {
  T sum = 0;
  for (std::int64_t j = 0; j < keys; ++j) sum += scores[j];
  if (std::fabs(sum) < static_cast<T>(kTinySum)) sum = 1;
  return std::max(std::fabs(sum), T{1});
}

// In double (decayed_scores::reference): c = cumsum(log(sigmoid(A_log) + 1e-8)) per head, the
// decay L[i, j] = exp(c[i] - c[j]) and row_norm.
int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  std::vector<double> log_decay_sum(static_cast<std::size_t>(shape.seq_len));
  return decayed_scores::reference(
      shape, in, out,
      [&](std::int64_t bh) {
        const auto* a_log = static_cast<const float*>(in[3].data) + bh * shape.seq_len;
        double running = 0;
        for (std::int64_t i = 0; i < shape.seq_len; ++i) {
          const double a = 1.0 / (1.0 + std::exp(-static_cast<double>(a_log[i])));
          running += std::log(a + kLogEpsilon);
          log_decay_sum[i] = running;
        }
      },
      [&](std::int64_t i, std::int64_t j) { return std::exp(log_decay_sum[i] - log_decay_sum[j]); },
      row_norm<double>);
}

// The cumulative log decay of one (batch, head), negated: -cumsum(log(sigmoid(A_log) + 1e-8)) in
// f32, summed in sequence order.
void negated_log_decay_sum(const float* a_log, std::int64_t seq_len, float* out) {
  float running = 0;
  for (std::int64_t i = 0; i < seq_len; ++i) {
    const float a = 1.0f / (1.0f + std::exp(-a_log[i]));
    running += std::log(a + static_cast<float>(kLogEpsilon));
    out[i] = -running;
  }
}

// What a fusing compiler emits for the original (decayed_scores::baseline): per row, L[i, j] =
// exp(c[i] - c[j]) formed for the visible keys (vectorized exp) and applied while the row is
// summed, then 1 / max(|sum|, 1).
int baseline(const Shape& shape, const kb_config* cfg, const kb_tensor* in, kb_tensor* out) {
  std::vector<float> neg_decay_sum(static_cast<std::size_t>(shape.seq_len));
  return decayed_scores::baseline(
      shape, cfg, in, out,
      [&](std::int64_t bh) {
        negated_log_decay_sum(static_cast<const float*>(in[3].data) + bh * shape.seq_len,
                              shape.seq_len, neg_decay_sum.data());
      },
      [&](std::int64_t i, float* row, float* decay) {
        const auto visible = static_cast<std::size_t>(i + 1);
        // decay[j] = exp(-c[j] - (-c[i])) = exp(c[i] - c[j]).
        std::copy_n(neg_decay_sum.data(), visible, decay);
        ops::exp_inplace_sum(decay, visible, neg_decay_sum[i]);
        float row_sum = 0;
#pragma omp simd reduction(+ : row_sum)
        for (std::size_t j = 0; j < visible; ++j) {
          row[j] *= decay[j];
          row_sum += row[j];
        }
        // |sum| < 1e-6 becomes 1, which max(|sum|, 1) maps to 1 as well.
        return 1.0f / std::max(std::fabs(row_sum), 1.0f);
      });
}

// The original program op by op (decayed_scores::bf16_program): a = sigmoid(A_log), log(a + 1e-8)
// and its cumsum in f32, the (S, S) matrix L = exp(where(i >= j, c[i] - c[j], -1e30)), and the
// signed row sum with its where and the division by max(|sum|, 1).
int bf16_program(const Shape& shape, const kb_config* cfg, const kb_tensor* in, kb_tensor* out) {
  const std::int64_t seq_len = shape.seq_len;
  std::vector<float> log_a_cumsum(static_cast<std::size_t>(seq_len));
  return decayed_scores::bf16_program(
      shape, cfg, in, out,
      [&](std::int64_t bh) {
        const auto* a_log = static_cast<const float*>(in[3].data) + bh * seq_len;
        float running = 0;
        for (std::int64_t i = 0; i < seq_len; ++i) {
          const float a = 1.0f / (1.0f + std::exp(-a_log[i]));  // jax.nn.sigmoid
          running += std::log(a + static_cast<float>(kLogEpsilon));
          log_a_cumsum[i] = running;
        }
      },
      [&](std::int64_t i, std::int64_t j) {
        const float diff = log_a_cumsum[i] - log_a_cumsum[j];
        return std::exp(i >= j ? diff : -1e30f);
      },
      row_norm<float>);
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kMamba2Ssd16p = with_programs<Programs>({
    .name = "16p_Mamba2_SSD",
    .model = "Mamba-2-2.7B (Dao & Gu 2024)",
    .summary =
        "Mamba-2 SSD quadratic form: (C B^T * exp(cumsum log sigmoid(A_log)) causal decay), rows "
        "normalized by max(|sum|, 1), times x, over bf16 (B,H,S,D)",
    .problem = make_problem,
    // atol 0.5, not 1e-2: the original's own rounding of the weights to bf16 errs on out[i, :] by
    // ~N(0, (2^-9 / sqrt(3) * ||w_i||)^2) per element, w_i the normalized row, and where the signed
    // row sum is under 1 the row is not scaled down at all: ||w_i|| reaches ||scores_i|| ~ |c_i| *
    // (1 - a^2)^-1/2 ~ 8 * 5.3 ~ 42, an error std of ~0.047, ~0.26 at the worst of ~1e7 elements
    // (measured: 0.15 smoke, 0.27 cpu over the suite's seeds, after rtol's share). atol is twice
    // that; the relative-L2 bound (faithful 2.4e-3) stays 1e-2 and rejects every degenerate output.
    .tolerance = {.atol = 0.5, .rtol = 1e-2, .max_rel_l2 = 1e-2},
    .scaffold = scaffolds::k16p_Mamba2_SSD,
});

}  // namespace kbench
