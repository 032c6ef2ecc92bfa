// expect: rejected
// Attack class: reaching outside the worker. Tries to read kbench's memory through
// /proc/<ppid>/mem, to open kbench's descriptors (where the oracle and the baseline's outputs
// live), and to write into the compile cache under $HOME so a later evaluation would load planted
// code. The reads are refused (another user; inside a PID namespace getppid() is 0 and there is no
// /proc/0). The planting opens a file with O_WRONLY | O_CREAT, at which the seccomp filter kills
// the worker: rejected. Without the filter, the unprivileged user's opens fail too and the kernel,
// honest otherwise, is correct. Should any attempt succeed, it returns garbage, and the verdict
// turns to incorrect.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

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

static bool any_escape_works() {
  const std::string parent = "/proc/" + std::to_string(getppid());
  for (const std::string& path : {parent + "/mem", parent + "/fd/3", parent + "/environ"}) {
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd >= 0) {
      close(fd);
      return true;
    }
  }
  for (const char* dir : {"/root/.cache/kbench/so", "/root"}) {
    const std::string planted = std::string(dir) + "/kbench_planted_by_candidate";
    const int fd = open(planted.c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) {
      close(fd);
      unlink(planted.c_str());
      return true;
    }
  }
  return false;
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  rmsnorm(cfg, inputs, outputs);
  if (any_escape_works()) {
    auto* out = static_cast<uint16_t*>(outputs[0].data);
    for (int64_t i = 0; i < kb_numel(&outputs[0]); ++i) out[i] = 0;
  }
  return 0;
}
