// expect: correct
// Attack class: thread bomb. On its first call the kernel creates threads with the smallest stack
// until pthread_create fails (or 100000 exist); each names itself "kbx-threadbomb" and blocks
// forever on a condition variable, so they cost memory and task slots but no CPU. Threads are
// allowed (compute kernels need them): the bomb is stopped by the limits, RLIMIT_NPROC (which
// counts threads) or the address-space limit, and pthread_create returns EAGAIN. The kernel then
// computes honestly and returns, so the verdict is correct; the test checks that no
// "kbx-threadbomb" task outlives the evaluation. Under a user id shared by every worker (nobody),
// the bomb holds that user's whole process quota while it lives, so a concurrent evaluation's
// worker cannot start threads (RLIMIT_NPROC is per user, not per sandbox).
#include <pthread.h>
#include <sys/prctl.h>

#include <climits>
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

constexpr int kMaxThreads = 100000;

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_never = PTHREAD_COND_INITIALIZER;
bool g_bombed = false;

void* block_forever(void*) {
  prctl(PR_SET_NAME, "kbx-threadbomb");
  pthread_mutex_lock(&g_mutex);
  for (;;) pthread_cond_wait(&g_never, &g_mutex);  // nobody signals it
  return nullptr;
}

void bomb() {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (int i = 0; i < kMaxThreads; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, block_forever, nullptr) != 0) break;
  }
  pthread_attr_destroy(&attr);
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
