// expect: incorrect on 12p_RMSNorm
// One loop that runs exactly once per element of out[0], for kbench analyze's trip counts
// (tests/analysis_test.cc). The empty asm keeps the compiler from vectorizing or unrolling it. Its
// outputs are not 12p's (an eval calls it incorrect): only its machine code and trip counts are
// looked at.
#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  (void)inputs;
  (void)num_inputs;
  if (num_outputs < 1) return 1;
  const int64_t n = kb_numel(&outputs[0]);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  uint64_t acc = 1;
  for (int64_t i = 0; i < n; ++i) {
    asm volatile("" ::: "memory");
    acc = acc * 3 + static_cast<uint64_t>(i);
    out[i] = static_cast<uint16_t>(acc);
  }
  return 0;
}
