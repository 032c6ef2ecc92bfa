// expect: rejected
// Attack class: an escaped process. On its first call the kernel double-forks; the grandchild calls
// setsid() (a session and process group of its own, out of reach of a signal to the worker's
// group), names itself "kbx-setsid" and burns CPU forever, on the CPU it inherited, which is where
// the baseline is timed. The kernel itself is honest and about as fast as the baseline, so a
// speedup above 1 would come from the escapee slowing the bar. The seccomp filter kills the worker
// at the first fork, so the verdict is rejected. Without it, the grandchild outlives the evaluation
// (the test looks for "kbx-setsid" tasks afterwards); a PID namespace, whose end kills everything
// in it, stops that too.
#include <sys/prctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>

#include "kbench/kernel.h"

// Plain RMSNorm over the last axis: f32 math, normalized value rounded to bf16, times scale.
static void rmsnorm(const kb_config* cfg, const kb_tensor* inputs, kb_tensor* outputs) {
  const kb_tensor& x = inputs[0];
  const int64_t d = x.shape[x.rank - 1];
  if (d == 0) return;
  const int64_t rows = kb_numel(&x) / d;
  const auto* xs = static_cast<const uint16_t*>(x.data);
  const auto* scale = static_cast<const uint16_t*>(inputs[1].data);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  const float eps = static_cast<float>(kb_param_or(cfg, "epsilon", 1e-5));
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* row = xs + r * d;
    float sum_sq = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      const float v = kb_bf16_to_f32(row[j]);
      sum_sq += v * v;
    }
    const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
    for (int64_t j = 0; j < d; ++j) {
      const float normed = kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(row[j]) * inv_rms));
      out[r * d + j] = kb_f32_to_bf16(normed * kb_bf16_to_f32(scale[j]));
    }
  }
}

namespace {

bool g_escaped = false;

[[noreturn]] void burn_forever() {
  prctl(PR_SET_NAME, "kbx-setsid");
  volatile uint64_t counter = 0;
  for (;;) counter = counter + 1;
}

void escape() {
  const pid_t child = fork();
  if (child != 0) return;  // the worker (or a failed fork) goes on
  setsid();
  if (fork() != 0) _exit(0);  // the grandchild is no session leader and has no parent to wait
  burn_forever();
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (!g_escaped) {
    g_escaped = true;
    escape();
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
