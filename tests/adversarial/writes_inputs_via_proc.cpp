// expect: rejected
// Attack class: tampering with shared inputs. The inputs are mapped read-only, but the memfd behind
// them can be reopened for writing through /proc/self/fd. A kernel that zeroes its inputs and
// returns zeros would agree with a baseline that ran after it on the same (now zero) inputs. The
// seccomp filter kills the worker at the open with O_RDWR, so the verdict is rejected. Without the
// filter, the reopening works but the memfd is write-sealed, so the writable mapping fails and the
// kernel reports that with return code 8 (runtime_error); had the mapping worked, kbench's
// comparison of the shared inputs with its private copy after every call would report
// runtime_error for the tampering itself.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
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

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const int fd = open("/proc/self/fd/3", O_RDWR);
  if (fd <
      0) {  // could not reopen for writing: the attack is impossible, so behave and be correct...
    rmsnorm(cfg, inputs, outputs);
    return 7;  // ...but say so with a runtime error, as the expected verdict is about the attack
  }
  const size_t bytes = static_cast<size_t>(kb_numel(&inputs[0])) * 2;
  void* writable = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (writable == MAP_FAILED) return 8;
  std::memset(writable, 0, bytes);
  std::memset(outputs[0].data, 0, static_cast<size_t>(kb_numel(&outputs[0])) * 2);
  return 0;
}
