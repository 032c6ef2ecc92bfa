// expect: timeout
// Attack class: kb_run never returns. The loop has a side effect (a volatile counter), so the
// compiler may not delete it under C++'s forward-progress rule. The harness must enforce its
// per-call wall-time limit, kill the worker and report timeout.
#include <cstdint>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  (void)inputs;
  (void)num_inputs;
  (void)outputs;
  (void)num_outputs;
  volatile uint64_t spins = 0;
  for (;;) spins = spins + 1;
}
