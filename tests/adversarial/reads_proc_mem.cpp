// expect: rejected
// Attack class: tampering with inputs through /proc/self/mem. The inputs are a read-only shared
// mapping, but /proc/self/mem writes with the kernel's "force" semantics (how debuggers plant
// breakpoints in read-only code). This kernel opens /proc/self/mem for reading and writing, writes
// zeros over its input x there, and then computes on whatever x holds (zeros, if the write went
// through). The seccomp filter kills the worker at an open with O_RDWR, so the verdict is rejected.
// Without it, the write-sealed memfd behind the inputs makes the forced write fail (a shared
// mapping without write permission cannot be forced), the kernel computes on the true inputs and
// the verdict is correct; had the write gone through, kbench's comparison of the inputs with its
// private copy would report runtime_error.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
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
  const int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    const std::vector<char> zeros(static_cast<size_t>(kb_numel(&inputs[0])) * 2, 0);
    const ssize_t written = pwrite(fd, zeros.data(), zeros.size(),
                                   static_cast<off_t>(reinterpret_cast<uintptr_t>(inputs[0].data)));
    (void)written;  // whether it worked shows in x itself
    close(fd);
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
