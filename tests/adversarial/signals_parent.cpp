// expect: rejected
// Attack class: signals to other processes. On its first call the kernel sends SIGKILL to its
// parent (kbench, when the parent is visible: getppid() is 0 inside a PID namespace), with kill and
// with tgkill, then to PID 1, then to every process it may signal (kill(-1)), and then computes
// honestly. The seccomp filter kills the worker at the first signal aimed at another process, so
// the verdict is rejected: inside a PID namespace the worker is PID 1 itself, so kill(1) may pass
// as a signal to itself (which the kernel drops for a namespace's init), and kill(-1) is rejected
// for certain. Without the filter, kbench running as another user refuses the first three with
// EPERM, but kill(-1) reaches every process of the worker's user: on a runner where all workers
// are nobody, other evaluations' workers die.
#include <signal.h>
#include <sys/syscall.h>
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

bool g_signalled = false;

void signal_everyone() {
  const pid_t parent = getppid();
  if (parent > 0) {
    kill(parent, SIGKILL);
    syscall(SYS_tgkill, parent, parent, SIGKILL);
  }
  kill(1, SIGKILL);
  kill(-1, SIGKILL);
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (!g_signalled) {
    g_signalled = true;
    signal_everyone();
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
