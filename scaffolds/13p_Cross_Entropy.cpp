// Naive but correct candidate for 13p_Cross_Entropy
// (Llama-3.1-8B fused linear + softmax cross-entropy), a starting point.
//
// logits = hidden @ weight;  loss = mean over t of ( logsumexp(logits[t]) - logits[t, labels[t]] )
//
// Inputs   hidden  bf16  (T, H)
//          weight  bf16  (H, V)
//          labels  i32   (T)      each in [0, V)
// Output   loss    f32   ()       scalar; checked to 1.4e-3 relative: every token counts
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
