// expect: correct
// Attack class: using more cores than granted. With --threads 1 the worker is pinned to one CPU;
// this kernel tries to widen its affinity to two CPUs and keeps a second thread busy for the whole
// of every call, pinned to the other CPU, which would do the work many times over. It does not give
// up when the widening is refused: the helper spins anyway. The sandbox's filter refuses
// sched_setaffinity (EPERM), so both threads share the one granted CPU and nothing is gained: the
// kernel is honest and correct. Were the widening ever to succeed, kbench's CPU-budget check (CPU
// used over the calls against their wall time times the thread budget) would say `rejected`.
#include <sched.h>

#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

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

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < 2; ++c) CPU_SET(c, &all);
  sched_setaffinity(0, sizeof all, &all);  // refused or not, the helper below spins
  // Keep a second core busy for the whole call (the rows are cheap at smoke size, so repeat them).
  volatile bool done = false;
  std::thread helper([&] {
    cpu_set_t other;
    CPU_ZERO(&other);
    CPU_SET(1, &other);
    sched_setaffinity(0, sizeof other, &other);
    while (!done) {
    }
  });
  for (int repeat = 0; repeat < 5000; ++repeat) rmsnorm(cfg, inputs, outputs);
  done = true;
  helper.join();
  return 0;
}
