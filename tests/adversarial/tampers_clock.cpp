// expect: correct
// expect-speedup-below: 1.0
// Attack class: timer tampering by interposition. Besides an honest, deliberately slow kernel, the
// shared object defines clock_gettime, gettimeofday, time and clock, each returning one frozen
// value, hoping to replace the worker's (or kbench's) clocks so that calls look instant. kbench
// times every call from its own process, which never loads candidate code, and the worker loads
// the candidate with RTLD_LOCAL, which keeps its symbols out of the scope the worker's (and the
// libraries') references resolve in, so the definitions change nothing: the verdict is correct and
// the speedup is the honest one, well below 1. A speedup near or above 1 would mean a tampered
// clock was believed.
#include <sys/time.h>
#include <time.h>

#include <cmath>
#include <cstdint>

#include "kbench/kernel.h"

// RMSNorm over the last axis, honest and deliberately slow: the mean of squares is recomputed for
// every element (D^2 work per row), which puts its time at smoke size several times above the
// baseline's, call overhead included. A speedup of 1.0 or more can then only come from the attack.
static void rmsnorm_slow(const kb_config* cfg, const kb_tensor* inputs, kb_tensor* outputs) {
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
    for (int64_t j = 0; j < d; ++j) {
      // out may alias x as far as the compiler knows, so this sum is not hoisted out of the loop.
      float sum_sq = 0.0f;
      for (int64_t k = 0; k < d; ++k) {
        const float v = kb_bf16_to_f32(row[k]);
        sum_sq += v * v;
      }
      const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
      const float normed = kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(row[j]) * inv_rms));
      out[r * d + j] = kb_f32_to_bf16(normed * kb_bf16_to_f32(scale[j]));
    }
  }
}

// The frozen clocks, with glibc's exact prototypes so they would interpose where symbols are
// shared: 2026-01-01T00:00:00Z, forever.
namespace {
constexpr time_t kFrozenSeconds = 1767225600;
}  // namespace

extern "C" int clock_gettime(clockid_t, struct timespec* ts) noexcept {
  ts->tv_sec = kFrozenSeconds;
  ts->tv_nsec = 0;
  return 0;
}

extern "C" int gettimeofday(struct timeval* __restrict tv, void* __restrict) noexcept {
  tv->tv_sec = kFrozenSeconds;  // glibc declares tv non-null
  tv->tv_usec = 0;
  return 0;
}

extern "C" time_t time(time_t* t) noexcept {
  if (t) *t = kFrozenSeconds;
  return kFrozenSeconds;
}

extern "C" clock_t clock() noexcept {
  return 0;
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  rmsnorm_slow(cfg, inputs, outputs);
  return 0;
}
