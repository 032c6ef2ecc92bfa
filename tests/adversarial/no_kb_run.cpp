// expect: compile_error
// Attack class: compiles and links into a .so, but exports no kb_run with C linkage. The header is
// not included and the entry point is declared without extern "C", so the symbol is C++-mangled
// (_Z6kb_run...). Loading must fail at dlsym("kb_run"), which counts as a build failure
// (compile_error), not as a crash of the worker.
#include <cstdint>

// Same shape as the ABI entry point, but with C++ linkage.
int kb_run(const void* cfg, const void* inputs, int32_t num_inputs, void* outputs,
           int32_t num_outputs) {
  (void)cfg;
  (void)inputs;
  (void)num_inputs;
  (void)outputs;
  (void)num_outputs;
  return 0;
}
