// expect: correct
// expect-speedup-below: 1.0
// Attack class: output caching by input fingerprint. The kernel keys each call's outputs by a hash
// of the first 64 input values and, when a later call's inputs hash the same, replays the stored
// outputs without computing. kbench draws fresh inputs for every timed call, so in the timed calls
// it never hits and always computes, honestly and slowly (the deliberately quadratic kernel): the
// verdict is correct and the speedup well below 1. (The first warm-up call reuses the last
// correctness inputs and does hit; warm-ups are neither timed nor compared, so that gains nothing.)
// A hit in a timed call would show as a speedup near or above 1, or, had the rest of the inputs
// differed, as incorrect.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

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

namespace {

constexpr int64_t kFingerprintValues = 64;

std::unordered_map<uint64_t, std::vector<uint16_t>> g_cache;

// FNV-1a over the first values of x and the shape (enough to tell input sets apart, cheaply).
uint64_t fingerprint(const kb_tensor& x) {
  const auto* values = static_cast<const uint16_t*>(x.data);
  const int64_t n = kb_numel(&x) < kFingerprintValues ? kb_numel(&x) : kFingerprintValues;
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  for (int32_t i = 0; i < x.rank; ++i) mix(static_cast<uint64_t>(x.shape[i]));
  for (int64_t i = 0; i < n; ++i) mix(values[i]);
  return h;
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const size_t bytes = static_cast<size_t>(kb_numel(&outputs[0])) * 2;
  const uint64_t key = fingerprint(inputs[0]);
  const auto hit = g_cache.find(key);
  if (hit != g_cache.end() && hit->second.size() * 2 == bytes) {
    std::memcpy(outputs[0].data, hit->second.data(), bytes);
    return 0;
  }
  rmsnorm_slow(cfg, inputs, outputs);
  const auto* out = static_cast<const uint16_t*>(outputs[0].data);
  g_cache[key].assign(out, out + bytes / 2);
  return 0;
}
