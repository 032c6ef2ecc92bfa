// expect: rejected
// Attack class: fork bomb. On its first call the kernel forks until fork fails (or 100000 times);
// every child names itself "kbx-forkbomb" and forks forever in a loop, so the processes multiply
// and spin. Then the parent computes honestly. The seccomp filter kills the worker at its first
// fork (a clone without CLONE_THREAD), so the verdict is rejected. Without the filter, RLIMIT_NPROC
// caps the bomb at a few hundred processes, which compete with the worker for its CPU and must
// all be dead when the verdict is recorded (the test looks for "kbx-forkbomb" tasks afterwards).
// While it lives, a bomb under a shared user id (nobody) also takes that user's process quota from
// every other worker on the machine.
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

constexpr int kMaxForks = 100000;

bool g_bombed = false;

void bomb() {
  for (int i = 0; i < kMaxForks; ++i) {
    const pid_t pid = fork();
    if (pid < 0) return;  // the process limit: the parent goes on to compute
    if (pid == 0) {
      prctl(PR_SET_NAME, "kbx-forkbomb");
      for (;;) fork();  // children (and theirs) multiply and spin, failed forks included
    }
  }
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (!g_bombed) {
    g_bombed = true;
    bomb();
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
