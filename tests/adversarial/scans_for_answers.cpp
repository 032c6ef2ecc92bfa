// expect: correct
// expect-speedup-below: 1.0
// Attack class: reading expected outputs. Before each call the kernel looks through every other
// process it can see for a tensor arena: descriptors in /proc/<pid>/fd that are memfds named
// kbench-* (kbench's, the baseline worker's) and mappings in /proc/<pid>/map_files. It opens any it
// can, and if one has exactly the size of an output arena (kbench's layout: the output rounded up
// to whole pages), it copies that as its answer and skips the computation. Otherwise it computes
// honestly and slowly (the deliberately quadratic kernel). The baseline's outputs and the oracle
// live in processes the worker cannot reach (another user, another PID namespace, landlock, whose
// ptrace rule also closes /proc/<pid>/fd of processes outside the worker's domain), so it finds
// nothing: the verdict is correct and the speedup well below 1. A find shows as a speedup near or
// above 1 (the baseline's answers, copied) or as incorrect (a stale or poisoned arena). Without
// landlock or a private /proc, the workers of other evaluations running as the same user are
// within reach (dumpable, same uid): a concurrent evaluation of 12p at smoke size has an arena of
// exactly the right size, and the verdict then depends on what it holds.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

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

constexpr size_t kPage = 4096;

// Copies the first `bytes` of the file behind `path` into `out` if the file's size is `arena`.
bool copy_if_arena(const std::string& path, size_t arena, size_t bytes, void* out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool copied = false;
  if (fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == arena) {
    void* mapped = mmap(nullptr, arena, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped != MAP_FAILED) {
      std::memcpy(out, mapped, bytes);
      munmap(mapped, arena);
      copied = true;
    }
  }
  close(fd);
  return copied;
}

// Whether the symbolic link at `path` points at a memfd named kbench-*.
bool is_kbench_memfd(const std::string& path) {
  char target[256];
  const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  return std::strncmp(target, "/memfd:kbench-", 14) == 0;
}

// Looks through one directory of links (fd or map_files) of another process for an arena.
bool scan_links(const std::string& dir, bool memfds_only, size_t arena, size_t bytes, void* out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return false;
  bool found = false;
  while (const dirent* entry = readdir(d)) {
    if (entry->d_name[0] == '.') continue;
    const std::string link = dir + "/" + entry->d_name;
    if (memfds_only && !is_kbench_memfd(link)) continue;
    if (copy_if_arena(link, arena, bytes, out)) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

bool steal_answer(size_t bytes, void* out) {
  const size_t arena = (bytes + kPage - 1) / kPage * kPage;
  // Its own pid as this /proc numbers it: inside a PID namespace getpid() is 1 while /proc may
  // still be the host's.
  char self_link[32];
  const ssize_t self_n = readlink("/proc/self", self_link, sizeof self_link - 1);
  const std::string self(self_link, self_n > 0 ? static_cast<size_t>(self_n) : 0);
  DIR* proc = opendir("/proc");
  if (!proc) return false;
  bool found = false;
  while (const dirent* entry = readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(entry->d_name[0])) || self == entry->d_name)
      continue;
    const std::string pid_dir = std::string("/proc/") + entry->d_name;
    if (scan_links(pid_dir + "/fd", true, arena, bytes, out) ||
        scan_links(pid_dir + "/map_files", false, arena, bytes, out)) {
      found = true;
      break;
    }
  }
  closedir(proc);
  return found;
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const size_t bytes = static_cast<size_t>(kb_numel(&outputs[0])) * 2;
  if (steal_answer(bytes, outputs[0].data)) return 0;
  rmsnorm_slow(cfg, inputs, outputs);
  return 0;
}
