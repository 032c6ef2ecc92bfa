// expect: runtime_error
// Attack class: memory exhaustion. kb_run asks for 1024 blocks of 1 GiB (1 TiB, far past any sane
// limit) and then writes every byte of them, so the memory is really committed, not just reserved.
// Like sloppy code it never checks malloc for NULL. Under an address-space limit (RLIMIT_AS) the
// later mallocs return NULL and the first memset -- of the newest block -- faults at once; under a
// cgroup/RSS limit every malloc succeeds (overcommit) and the worker is OOM-killed once the touched
// pages reach the limit. Either way the harness must report runtime_error and stay alive itself.
// (Blocks are touched newest first only so that the address-space case fails immediately instead
// of after faulting in gigabytes, which takes seconds per GiB on a slow VM.)
// Run it only under the harness (or with `ulimit -v`): without a limit it takes the whole machine.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

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
// Global, so the blocks stay reachable and the stores cannot be optimized away.
constexpr int kBlocks = 1024;
void* g_blocks[kBlocks];
}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  constexpr size_t kBlock = size_t{1} << 30;
  for (int i = 0; i < kBlocks; ++i) g_blocks[i] = std::malloc(kBlock);
  for (int i = kBlocks - 1; i >= 0; --i) std::memset(g_blocks[i], 0x5a, kBlock);  // no NULL check
  // Only reachable on a machine with > 1 TiB and no limit: still not a success.
  rmsnorm(cfg, inputs, outputs);
  return 4;
}
