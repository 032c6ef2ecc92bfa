// expect: rejected
// Attack class: filling the disk (and memory-backed file systems). On its first call the kernel
// ignores SIGXFSZ, so a file-size limit ends a write with EFBIG instead of killing it, then fills,
// in this order and each in files of up to RLIMIT_FSIZE: anonymous memfds, files
// /tmp/kbench-adversarial-outside-fills_disk-N and files
// /dev/shm/kbench-adversarial-outside-fills_disk-N. Only if none of that wrote a byte does it write
// 100 MiB to stdout, into kbench's log. Then it computes honestly. The order makes the verdict
// deterministic: the seccomp filter kills the worker at memfd_create, the first forbidden call it
// makes (ignoring SIGXFSZ is allowed), so the verdict is rejected (and the opens with O_CREAT that
// follow would be killed too). The stdout fallback is for a runner that only refuses those calls:
// its log cap (RLIMIT_FSIZE on the log) ends the spam with EFBIG and the verdict would be correct.
// Each place is filled up to 256 MiB, not until ENOSPC: enough to show that per-file limits do not
// bound the total (it writes several capped files), without taking the disk of the machine that
// runs the tests when a runner fails to stop it. The test removes what it finds of those files.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
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

namespace {

constexpr size_t kChunk = 1 << 20;
constexpr size_t kBudgetPerPlace = 256u << 20;  // see the header: bounded, not until ENOSPC
constexpr size_t kStdoutSpam = 100u << 20;      // more than kbench's 64 MiB log cap

char g_chunk[kChunk];
bool g_filled = false;

// Writes up to `budget` bytes into `fd`; returns what it wrote (a write stops at EFBIG or ENOSPC).
size_t fill(int fd, size_t budget) {
  size_t written = 0;
  while (written < budget) {
    const ssize_t got = write(fd, g_chunk, kChunk);
    if (got <= 0) break;
    written += static_cast<size_t>(got);
  }
  return written;
}

// Fills one place with files of up to the size limit until `budget` is spent or a file yields
// nothing; `open_next(i)` opens the i-th file (-1: cannot).
template <typename OpenNext>
size_t fill_place(OpenNext open_next) {
  size_t total = 0;
  for (int i = 0; total < kBudgetPerPlace; ++i) {
    const int fd = open_next(i);
    if (fd < 0) break;
    const size_t wrote = fill(fd, kBudgetPerPlace - total);
    // memfds are kept open (closing frees them); files stay on their file system anyway.
    total += wrote;
    if (wrote == 0) break;
  }
  return total;
}

void fill_everything() {
  for (size_t i = 0; i < kChunk; ++i) g_chunk[i] = static_cast<char>('a' + i % 26);
  signal(SIGXFSZ, SIG_IGN);
  size_t total = fill_place([](int) { return memfd_create("kbx-fillsdisk", MFD_CLOEXEC); });
  for (const char* dir : {"/tmp", "/dev/shm"}) {
    total += fill_place([dir](int i) {
      const std::string path =
          std::string(dir) + "/kbench-adversarial-outside-fills_disk-" + std::to_string(i);
      return open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    });
  }
  if (total == 0) {
    for (size_t spammed = 0; spammed < kStdoutSpam; spammed += kChunk)
      if (write(STDOUT_FILENO, g_chunk, kChunk) <= 0) break;
  }
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (!g_filled) {
    g_filled = true;
    fill_everything();
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
