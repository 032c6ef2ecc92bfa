// expect: incorrect
// Attack class: non-finite output. Every element is a quiet NaN (bf16 0x7fc0) -- what an
// uninitialized accumulator or a 0/0 produces. NaN compares false with everything, so a checker
// written as `if (|a - b| > tol) fail` would pass it; kbench must treat NaN where the oracle is
// finite as a failure: incorrect.
#include <cstdint>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  (void)inputs;
  (void)num_inputs;
  if (num_outputs != 1) return 1;
  const int64_t n = kb_numel(&outputs[0]);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) out[i] = 0x7fc0;
  return 0;
}
