// expect: correct
// Attack class: reading a secret. kbench's environment holds API keys (the test puts
// KBENCH_ADVERSARIAL_SECRET=kbench-secret-value there). This kernel looks for that name in its own
// environ, in /proc/self/environ, in /proc/1/environ (kbench's init, or the worker itself in a PID
// namespace) and in /proc/<pid>/environ of every process it can see. The worker's environment is
// scrubbed to an allowlist and other processes' environ files are closed to it (another user,
// another PID namespace), so nothing is found and the kernel, honest otherwise, is correct. Had it
// found the secret, it returns zeros, and the verdict turns to incorrect: a leak cannot pass; it
// also prints what it found to stderr, whose tail kbench keeps in the result (the test looks for
// the secret's value in kbench's output).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "kbench/kernel.h"

extern char** environ;

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

constexpr const char* kSecretName = "KBENCH_ADVERSARIAL_SECRET";

// Whether the file at `path` (an environ file: NUL-separated entries) names the secret.
// Prints the entry that names the secret (up to the NUL that ends it).
void exfiltrate(const char* entry) {
  std::fprintf(stderr, "reads_env_secret found %s\n", entry);
  std::fflush(stderr);
}

bool file_names_secret(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text;
  char buf[4096];
  ssize_t got;
  while ((got = read(fd, buf, sizeof buf)) > 0 && text.size() < (1u << 20))
    text.append(buf, static_cast<size_t>(got));
  close(fd);
  const size_t at = text.find(kSecretName);
  if (at == std::string::npos) return false;
  exfiltrate(text.c_str() + at);
  return true;
}

bool secret_visible() {
  for (char** e = environ; e && *e; ++e) {
    if (std::strstr(*e, kSecretName)) {
      exfiltrate(*e);
      return true;
    }
  }
  if (file_names_secret("/proc/self/environ") || file_names_secret("/proc/1/environ")) return true;
  DIR* proc = opendir("/proc");
  if (!proc) return false;
  bool found = false;
  while (const dirent* entry = readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0]))) continue;
    if (file_names_secret(std::string("/proc/") + entry->d_name + "/environ")) {
      found = true;
      break;
    }
  }
  closedir(proc);
  return found;
}

int g_secret_seen = -1;  // -1: not looked yet

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (g_secret_seen < 0) g_secret_seen = secret_visible() ? 1 : 0;
  rmsnorm(cfg, inputs, outputs);
  if (g_secret_seen == 1) std::memset(outputs[0].data, 0, kb_numel(&outputs[0]) * 2);
  return 0;
}
