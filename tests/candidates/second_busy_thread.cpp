// expect: correct on 12p_RMSNorm
// A correct RMSNorm that keeps a second thread spinning for the whole of each call: two CPUs' worth
// of work on a one-thread budget. In an evaluation the sandbox keeps the worker on its one granted
// CPU (sched_setaffinity is refused), so both threads share it, nothing is gained, and the verdict
// is correct. tests/seats_test.cc grants its worker two CPUs for one thread on purpose, as if the
// affinity had been widened, to check that the CPU budget then sees the second thread's time.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  std::atomic<bool> done{false};
  std::thread spinner([&done] {
    while (!done.load(std::memory_order_relaxed)) {
    }
  });
  const kb_tensor& x = inputs[0];
  const int64_t d = x.shape[x.rank - 1];
  const int64_t rows = kb_numel(&x) / d;
  const auto* xs = static_cast<const uint16_t*>(x.data);
  const auto* scale = static_cast<const uint16_t*>(inputs[1].data);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  const float eps = static_cast<float>(kb_param_or(cfg, "epsilon", 1e-5));
  // Long enough per call (about 20 ms at smoke size) that the spinner's share is far above the
  // budget's slack.
  for (int repeat = 0; repeat < 1000; ++repeat) {
    for (int64_t r = 0; r < rows; ++r) {
      float sum_sq = 0.0f;
      for (int64_t j = 0; j < d; ++j) {
        const float v = kb_bf16_to_f32(xs[r * d + j]);
        sum_sq += v * v;
      }
      const float inv = 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
      for (int64_t j = 0; j < d; ++j)
        out[r * d + j] =
            kb_f32_to_bf16(kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(xs[r * d + j]) * inv)) *
                           kb_bf16_to_f32(scale[j]));
    }
  }
  done = true;
  spinner.join();
  return 0;
}
