// expect: compile_error
// Attack class: source that does not compile (a missing semicolon and an undeclared name). The
// harness must report the compiler's diagnostics as compile_error, not crash or hang.
#include <cstdint>

#include "kbench/kernel.h"

// clang-format off
extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  int64_t rows = inputs[0].shape[0]
  return undeclared_helper(rows);
}
// clang-format on
