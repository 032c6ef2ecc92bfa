// 13p_Cross_Entropy: fused linear + softmax cross-entropy, Llama-3.1-8B (openxla/tokamax).
//
// Operator  logits = hidden @ weight                                   (T x V)
//           loss   = mean over t of -sum_v one_hot(labels)[t, v] * log_softmax(logits)[t, v]
//                  = mean over t of ( logsumexp(logits[t]) - logits[t, labels[t]] )
// Inputs    hidden  bf16 (T, H)  normal
//           weight  bf16 (H, V)  normal*0.02
//           labels  i32  (T)     randint[0, V)
// Output    loss    f32  ()      scalar, as in the original: its bf16 log_softmax is multiplied by
//                                jax.nn.one_hot's f32 one-hot, so the sum, the mean and the result
//                                are f32
// FLOPs     T*H*V*2 + T*V*3; 8,610,266,480,640 at full size (T=8192, H=4096, V=128256).
// Character compute-bound GEMM feeding a [T, V] logits tensor that an unfused program materializes.
// Deviations
//   - The tolerance bounds the loss's relative error by max_rel_l2 = 1.4e-3 (atol/rtol stay 1e-2).
//     The spec's caveat: at atol/rtol 1e-2 (+-0.136 around a loss of ~12.6) a mean over 512 of
//     8192 tokens passes. Two errors compete on a mean over T tokens, both ~1/sqrt(T):
//       * the original's own arithmetic (bf16 logits, a bf16 log_softmax: every log-probability
//         rounded to a bf16 step of 2^(floor(log2 L) - 7) near the loss L, twice, with the
//         log-sum-exp) errs per token by eps ~ sqrt(2) * step / sqrt(12): relative eps / L =
//         0.0023 at smoke (L ~ 6.3, step 1/32) and 0.0026 at cpu (L ~ 9.2, step 1/16), measured;
//       * a mean over every other token errs by ~sigma / sqrt(T), sigma the per-token loss spread,
//         the std of a logit: 0.02 * sqrt(H) = 1.28 at H = 4096, i.e. 0.20 (smoke) and 0.14 (cpu)
//         relative to L per token.
//     The bound is k * (eps / L) / sqrt(T) with k = 6, so the faithful program's error over the
//     suite's 23 seeds (~3 standard deviations at worst) stays under half of it: 6 * 0.0023 /
//     sqrt(101) = 1.37e-3 (smoke) and 6 * 0.0026 / sqrt(136) = 1.34e-3 (cpu), rounded to 1.4e-3. A
//     subsample estimate then passes only when its standard-normal deviate is under k * eps / sigma
//     = 0.07 (smoke) or 0.11 (cpu): ~6% and ~9% of draws, the floor any bound on one mean has when
//     eps / sigma is ~1/50 (workloads_rows_test measures the rate: 29 of 32 smoke draws rejected).
//     The token counts make one bound fit both sizes; at the full size (T = 8192, never checked)
//     the same rule gives 1.7e-4. The suite requires the subsample to fail on more than half of
//     its draws (24 smoke, 3 cpu; harness/suite_checks.h), not on each: `kbench validate` failed
//     on 10 of 200 fresh smoke seeds while it asked for one draw.
//   - The cpu preset is (T, H, V) = (136, 4096, 4008): the original's hidden size, so the logits
//     have the original's spread (what separates a subsample from the program's rounding), and
//     V = 128256/32; 4.5 GFLOP, the GEMM dominates. The smoke preset (101, 4093, 257) keeps that
//     spread too (H prime, V prime, T prime) at 0.2 GFLOP.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/rows.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

struct Shape {
  std::int64_t tokens, hidden_dim, vocab_size;
};

constexpr Presets<Shape> kPresets = {
    .smoke = {101, 4093, 257},  // prime everywhere; H ~ 4096 keeps the logits' spread
    .cpu = {136, 4096, 4008},
    .full = {8192, 4096, 128256},
};

Problem make_problem(Size size) {
  const auto [tokens, hidden_dim, vocab_size] = kPresets.at(size);
  Problem problem;
  problem.config = {
      {"batch_tokens", tokens}, {"hidden_dim", hidden_dim}, {"vocab_size", vocab_size}};
  problem.inputs = {
      {{"hidden", KB_BF16, {tokens, hidden_dim}}, InitRule::normal()},
      {{"weight", KB_BF16, {hidden_dim, vocab_size}}, InitRule::normal(0.02)},
      {{"labels", KB_I32, {tokens}}, InitRule::randint(vocab_size)},
  };
  problem.outputs = {{"loss", KB_F32, {}}};
  const auto t = static_cast<double>(tokens);
  const auto h = static_cast<double>(hidden_dim);
  const auto v = static_cast<double>(vocab_size);
  problem.flops = t * h * v * 2 + t * v * 3;
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The shape of a call whose tensors match the signature above with every label in [0, V), or
// nullopt.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1) return std::nullopt;
  const kb_tensor& hidden = in[0];
  const kb_tensor& weight = in[1];
  const kb_tensor& labels = in[2];
  const kb_tensor& loss = out[0];
  const bool ok = hidden.dtype == KB_BF16 && hidden.rank == 2 && hidden.shape[0] > 0 &&
                  weight.dtype == KB_BF16 && weight.rank == 2 &&
                  weight.shape[0] == hidden.shape[1] && weight.shape[1] > 0 &&
                  labels.dtype == KB_I32 && labels.rank == 1 &&
                  labels.shape[0] == hidden.shape[0] && loss.dtype == KB_F32 && loss.rank == 0;
  if (!ok) return std::nullopt;
  const Shape shape{hidden.shape[0], hidden.shape[1], weight.shape[1]};
  const auto* label = static_cast<const std::int32_t*>(labels.data);
  for (std::int64_t t = 0; t < shape.tokens; ++t)
    if (label[t] < 0 || label[t] >= shape.vocab_size) return std::nullopt;
  return shape;
}

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [tokens, hidden_dim, vocab_size] = shape;
  const auto* hidden = static_cast<const bf16_t*>(in[0].data);
  const auto* weight = static_cast<const bf16_t*>(in[1].data);
  const auto* labels = static_cast<const std::int32_t*>(in[2].data);
  std::vector<double> logits(static_cast<std::size_t>(vocab_size));
  double total_loss = 0;
  for (std::int64_t t = 0; t < tokens; ++t) {
    std::fill(logits.begin(), logits.end(), 0.0);
    for (std::int64_t k = 0; k < hidden_dim; ++k) {
      const double h = bf16_to_f32(hidden[t * hidden_dim + k]);
      const bf16_t* weight_row = weight + k * vocab_size;
      for (std::int64_t v = 0; v < vocab_size; ++v) logits[v] += h * bf16_to_f32(weight_row[v]);
    }
    double max_logit = logits[0];
    for (double logit : logits) max_logit = std::max(max_logit, logit);
    double sum_exp = 0;
    for (double logit : logits) sum_exp += std::exp(logit - max_logit);
    total_loss += max_logit + std::log(sum_exp) - logits[labels[t]];
  }
  *static_cast<float*>(out[0].data) = static_cast<float>(total_loss / static_cast<double>(tokens));
  return 0;
}

// The OpenMP threads a call may use: cfg->num_threads, at least 1.
int threads_of(const kb_config* cfg) {
  return cfg != nullptr ? std::max(1, cfg->num_threads) : 1;
}

// Columns of the weight per GEMM call in mean_loss: the call widens its bf16 panel to f32 (H x 512
// x 4 bytes = 8 MB at H = 4096), which then stays in the last-level cache for the GEMM's packing,
// instead of a whole f32 copy of the weight (64 MB at the cpu size) going through memory.
constexpr std::int64_t kVocabPanel = 512;

// The mean loss of tokens 0, step, 2 * step, ...: the logits of those hidden rows (a strided view)
// one vocabulary panel at a time, each panel one GEMM on the machine's fastest bf16 path into f32,
// folded into a running max and sum of exp per token (an online log-sum-exp) while it is in cache,
// the label's logit picked from its panel; then the mean in double, in token order (deterministic
// whatever the thread count).
float mean_loss(const kb_tensor* in, const Shape& shape, std::int64_t step, int threads) {
  const auto [tokens, hidden_dim, vocab_size] = shape;
  const std::int64_t rows = (tokens + step - 1) / step;
  const auto* labels = static_cast<const std::int32_t*>(in[2].data);
  const auto* weight = static_cast<const bf16_t*>(in[1].data);
  const ops::Matrix hidden{in[0].data, KB_BF16, rows, hidden_dim, hidden_dim * step};
  const std::int64_t panel_width = std::min(kVocabPanel, vocab_size);
  ops::ScratchMatrix logits(KB_F32, rows, panel_width);
  std::vector<float> running_max(static_cast<std::size_t>(rows),
                                 -std::numeric_limits<float>::infinity());
  std::vector<float> running_sum(static_cast<std::size_t>(rows), 0.0f);
  std::vector<float> label_logit(static_cast<std::size_t>(rows), 0.0f);
  for (std::int64_t v0 = 0; v0 < vocab_size; v0 += panel_width) {
    const std::int64_t width = std::min(panel_width, vocab_size - v0);
    const ops::Matrix weight_panel{weight + v0, KB_BF16, hidden_dim, width, vocab_size};
    ops::gemm(hidden, weight_panel, /*b_transposed=*/false,
              {logits.out().data, KB_F32, rows, width, width});
    const auto* panel = static_cast<const float*>(logits.in().data);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* row = panel + r * width;
      const auto n = static_cast<std::size_t>(width);
      const float new_max = std::max(running_max[r], ops::max_value(row, n));
      running_sum[r] =
          running_sum[r] * std::exp(running_max[r] - new_max) + ops::sum_exp(row, n, new_max);
      running_max[r] = new_max;
      const std::int64_t label = labels[r * step];
      if (label >= v0 && label < v0 + width) label_logit[r] = row[label - v0];
    }
  }
  double total_loss = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    total_loss += running_max[r] + std::log(running_sum[r]) - label_logit[r];
  return static_cast<float>(total_loss / static_cast<double>(rows));
}

// What a fusing compiler (or a fused linear-cross-entropy kernel) does: mean_loss over every
// token, the [T, V] logits never materialized. The loss is f32, so nothing is rounded to bf16 on
// the way (the timed baseline is also the oracle).
int baseline(const Shape& shape, const kb_config* cfg, const kb_tensor* in, kb_tensor* out) {
  *static_cast<float*>(out[0].data) = mean_loss(in, shape, 1, threads_of(cfg));
  return 0;
}

// A shortcut the tolerance must reject: the mean loss of every other token (tokens 0, 2, 4, ...),
// computed like the baseline, at half its cost.
int subsample_estimate(const Shape& shape, const kb_config* cfg, const kb_tensor* in,
                       kb_tensor* out) {
  *static_cast<float*>(out[0].data) = mean_loss(in, shape, 2, threads_of(cfg));
  return 0;
}

// The original program op by op, rounding where it holds bf16: logits = hidden @ weight in bf16
// (f32 accumulation, one rounding); log_softmax on the bf16 logits as jax.nn.log_softmax computes
// it, every step a bf16 tensor: shifted = x - max(x), exp(shifted), their sum (jnp.sum accumulates
// bf16 in f32 and rounds the result), its log, shifted - log; then -sum(one_hot * log_probs) in f32
// (one_hot is f32, so only the label's bf16 log-probability survives, exactly) and the f32 mean.
int bf16_program(const Shape& shape, const kb_config* cfg, const kb_tensor* in, kb_tensor* out) {
  const auto [tokens, hidden_dim, vocab_size] = shape;
  const int threads = threads_of(cfg);
  const auto* labels = static_cast<const std::int32_t*>(in[2].data);
  ops::ScratchMatrix logits(KB_BF16, tokens, vocab_size);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false, logits.out());

  std::vector<float> token_loss(static_cast<std::size_t>(tokens));
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t t = 0; t < tokens; ++t) {
    const auto* row = static_cast<const bf16_t*>(logits.row(t));
    float x_max = bf16_to_f32(row[0]);
    for (std::int64_t v = 1; v < vocab_size; ++v) x_max = std::max(x_max, bf16_to_f32(row[v]));
    float sum_exp = 0;
    for (std::int64_t v = 0; v < vocab_size; ++v) {
      const float shifted = round_to_bf16(bf16_to_f32(row[v]) - x_max);
      sum_exp += round_to_bf16(std::exp(shifted));
    }
    const float shifted_logsumexp = round_to_bf16(std::log(round_to_bf16(sum_exp)));
    const float shifted_label = round_to_bf16(bf16_to_f32(row[labels[t]]) - x_max);
    token_loss[t] = -round_to_bf16(shifted_label - shifted_logsumexp);
  }
  float total_loss = 0;  // jnp.mean of an f32 vector: an f32 sum, divided by T
  for (float loss : token_loss) total_loss += loss;
  *static_cast<float*>(out[0].data) = total_loss / static_cast<float>(tokens);
  return 0;
}

// The loss is an f32 scalar in the original, so the bf16 program writes whichever dtype it is
// given.
using Programs =
    CheckedPrograms<shape_of_call, reference, baseline, bf16_program, OutputDtype::kAny>;

}  // namespace

const Workload kCrossEntropy13p = with_programs<Programs>({
    .name = "13p_Cross_Entropy",
    .model = "Llama-3.1-8B (openxla/tokamax)",
    .summary = "Mean softmax cross-entropy of logits = hidden @ weight against integer labels (f32 "
               "scalar)",
    .problem = make_problem,
    // max_rel_l2 on a scalar is its relative error: see the header for the bound's derivation.
    .tolerance = {.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 1.4e-3},
    .subsample_estimate = checked_entry<shape_of_call, subsample_estimate>,
    .scaffold = scaffolds::k13p_Cross_Entropy,
});

}  // namespace kbench
