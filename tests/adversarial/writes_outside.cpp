// expect: rejected
// Attack class: writing outside the sandbox. On its first call the kernel creates
// /tmp/kbench-adversarial-outside-writes_outside (the test checks afterwards that no such file
// exists), writes a line into it and then computes honestly. The seccomp filter kills the worker
// at an open with O_CREAT or O_WRONLY, so the verdict is rejected whatever the outputs; landlock
// would refuse the path too. On a runner without those layers the file appears and the verdict is
// correct, which the test's check for the file turns into a failure.
#include <fcntl.h>
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
bool g_tried = false;
}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (!g_tried) {
    g_tried = true;
    const int fd = open("/tmp/kbench-adversarial-outside-writes_outside",
                        O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      static const char kLine[] = "planted by tests/adversarial/writes_outside.cpp\n";
      const ssize_t written = write(fd, kLine, sizeof kLine - 1);
      (void)written;  // the file's existence is the evidence; its content is a courtesy
      close(fd);
    }
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
