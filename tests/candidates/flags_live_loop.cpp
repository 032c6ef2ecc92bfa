// expect: incorrect on 12p_RMSNorm
// A loop whose header reads the flags that the previous iteration's compare set (the flags are live
// where kbench analyze puts its counter), once per element of out[0] plus the exit test, for
// kbench analyze's trip counts (tests/analysis_test.cc). A counter that changed the flags would
// change the exit test: the loop would run one element past the end, and the count would show it.
// Its outputs are not 12p's (an eval calls it incorrect).
#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  (void)inputs;
  (void)num_inputs;
  if (num_outputs < 1) return 1;
  const int64_t n = kb_numel(&outputs[0]);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  int64_t i = 0;
  asm volatile(
      "\tcmpq\t%[i], %[n]\n"
      ".Lkb_flags_live_head%=:\n"
      "\tjbe\t.Lkb_flags_live_done%=\n"  // reads the flags first: n <= i ends the loop
      "\tmovw\t%w[i], (%[out],%[i],2)\n"
      "\tleaq\t1(%[i]), %[i]\n"
      "\tcmpq\t%[i], %[n]\n"
      "\tjmp\t.Lkb_flags_live_head%=\n"
      ".Lkb_flags_live_done%=:\n"
      : [i] "+r"(i)
      : [n] "r"(n), [out] "r"(out)
      : "cc", "memory");
  return i == n ? 0 : 1;
}
