// 13p_Cross_Entropy: fused linear + softmax cross-entropy, Llama-3.1-8B (openxla/tokamax).
//
// Operator  logits = hidden @ weight                                   (T x V)
//           loss   = mean over t of ( logsumexp(logits[t]) - logits[t, labels[t]] )
// Inputs    hidden  bf16 (T, H)  normal
//           weight  bf16 (H, V)  normal*0.02
//           labels  i32  (T)     randint[0, V)
// Output    loss    f32  ()      scalar
// FLOPs     T*H*V*2 + T*V*3; 8,610,266,480,640 at full size (T=8192, H=4096, V=128256).
// Character compute-bound GEMM feeding a [T, V] logits tensor that an unfused program materializes.
// Deviations
//   - The loss is an f32 scalar (the spec's is bf16) and tolerance.max_rel_l2 is 1e-4, which on a
//     scalar bounds its relative error. The spec's caveat: a bf16 scalar compared at atol/rtol 1e-2
//     admits +-0.136 around a loss of ~12.6, so estimating the mean from 512 of 8192 tokens would
//     pass. The bound separates honest kernels from shortcuts: an f32 mean over tokens is accurate
//     to ~1e-6 relative; logits rounded to bf16 perturb it by at most ~1e-5 (per-logit errors are
//     independent and average out over tokens); dropping half the tokens moves it by ~1e-3 (the
//     per-token loss has a standard deviation of ~1.3 at full size, ~0.6 at cpu size). atol/rtol
//     stay at 1e-2.
//   - The cpu preset is (T, H, V) = (256, 512, 16032): V/H = 31.3 as in the original and a wide
//     softmax row (V = 128256/8); the GEMM still dominates (4.2 GFLOP against a 16 MB logits
//     tensor). H was halved rather than T kept at 1024 so one core finishes in ~100 ms.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "workloads/gemm.h"
#include "workloads/ops.h"
#include "workloads/row_ops.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

struct Shape {
  std::int64_t tokens, hidden_dim, vocab_size;
};

Shape shape_of(Size size) {
  switch (size) {
    case Size::kSmoke:
      return {37, 61, 1031};  // odd everywhere; V prime
    case Size::kCpu:
      return {256, 512, 16032};
    case Size::kFull:
      break;
  }
  return {8192, 4096, 128256};
}

Problem make_problem(Size size) {
  const auto [tokens, hidden_dim, vocab_size] = shape_of(size);
  Problem problem;
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

int reference(const kb_config*, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
              std::int32_t num_outputs) {
  const std::optional<Shape> shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const auto [tokens, hidden_dim, vocab_size] = *shape;
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

// What a compiler emits for the unfused loss: one GEMM into materialized f32 logits (on the
// machine's fastest bf16 path), then one log-softmax pass per row that keeps only the label's
// log-probability. The loss is f32, so nothing is rounded to bf16 on the way (the timed baseline is
// also the oracle).
int baseline(const kb_config*, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  const std::optional<Shape> shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const auto [tokens, hidden_dim, vocab_size] = *shape;
  const auto* labels = static_cast<const std::int32_t*>(in[2].data);
  ops::ScratchMatrix logits_matrix(KB_F32, tokens, vocab_size);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false,
            logits_matrix.out());
  const auto* logits = static_cast<const float*>(logits_matrix.in().data);

  std::vector<float> token_loss(static_cast<std::size_t>(tokens));
  const auto row_length = static_cast<std::size_t>(vocab_size);
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < tokens; ++t) {
    const float* row = logits + t * vocab_size;
    const float max_logit = row_ops::max_value(row, row_length);
    const float log_sum_exp = max_logit + std::log(row_ops::sum_exp(row, row_length, max_logit));
    token_loss[t] = log_sum_exp - row[labels[t]];
  }
  // The mean in double, in token order: deterministic whatever the thread count.
  double total_loss = 0;
  for (float loss : token_loss) total_loss += loss;
  *static_cast<float*>(out[0].data) = static_cast<float>(total_loss / static_cast<double>(tokens));
  return 0;
}

// Not R"cpp(": clang-format would reformat a raw string with that delimiter as C++.
constexpr std::string_view kScaffold =
    R"candidate(// Naive but correct candidate for 13p_Cross_Entropy
// (Llama-3.1-8B fused linear + softmax cross-entropy), a starting point.
//
// logits = hidden @ weight;  loss = mean over t of ( logsumexp(logits[t]) - logits[t, labels[t]] )
//
// Inputs   hidden  bf16  (T, H)
//          weight  bf16  (H, V)
//          labels  i32   (T)      each in [0, V)
// Output   loss    f32   ()       scalar; checked to 1e-4 relative, so every token counts
// Full size T=8192, H=4096, V=128256: the GEMM dominates; the [T, V] logits need not be stored.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& hidden = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& labels = inputs[2];
  if (hidden.rank != 2 || weight.rank != 2 || labels.rank != 1) return 1;

  const int64_t tokens = hidden.shape[0];
  const int64_t hidden_dim = hidden.shape[1];
  const int64_t vocab_size = weight.shape[1];
  const uint16_t* h = static_cast<const uint16_t*>(hidden.data);
  const uint16_t* w = static_cast<const uint16_t*>(weight.data);
  const int32_t* label = static_cast<const int32_t*>(labels.data);

  std::vector<float> logits(vocab_size);
  double total = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    if (label[t] < 0 || label[t] >= vocab_size) return 1;
    for (int64_t v = 0; v < vocab_size; ++v) logits[v] = 0.0f;
    for (int64_t k = 0; k < hidden_dim; ++k) {
      const float hk = kb_bf16_to_f32(h[t * hidden_dim + k]);
      for (int64_t v = 0; v < vocab_size; ++v)
        logits[v] += hk * kb_bf16_to_f32(w[k * vocab_size + v]);
    }
    float max_logit = logits[0];
    for (int64_t v = 1; v < vocab_size; ++v) max_logit = fmaxf(max_logit, logits[v]);
    double sum_exp = 0;
    for (int64_t v = 0; v < vocab_size; ++v) sum_exp += exp((double)(logits[v] - max_logit));
    total += max_logit + log(sum_exp) - logits[label[t]];
  }
  *static_cast<float*>(outputs[0].data) = (float)(total / (double)tokens);
  return 0;
}
)candidate";

}  // namespace

// A namespace-scope const has internal linkage unless declared extern; the registry links to it.
extern const Workload kCrossEntropy13p;
const Workload kCrossEntropy13p = {
    .id = "13p",
    .name = "13p_Cross_Entropy",
    .group = Group::kProduction,
    .source_model = "Llama-3.1-8B (openxla/tokamax)",
    .summary =
        "Mean softmax cross-entropy of logits = hidden @ weight against integer labels (f32 "
        "scalar)",
    .problem = make_problem,
    .reference = reference,
    .baseline = baseline,
    // max_rel_l2 on a scalar is its relative error: see the header for why 1e-4.
    .tolerance = {.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 1e-4},
    .scaffold = kScaffold,
};

}  // namespace kbench
