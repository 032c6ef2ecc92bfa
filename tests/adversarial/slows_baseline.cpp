// expect: rejected
// Attack class: slowing the bar. On its first call the kernel starts a helper with a raw clone that
// shares its memory, files and signal handlers but not its thread group (CLONE_VM without
// CLONE_THREAD): to the kernel it is another process, outside the worker's CPU accounting and,
// after setpgid(0, 0), outside the process group kbench freezes between calls. The helper, named
// "kbx-slowbar", spins exactly while the worker is stopped, that is while the baseline is timed on
// the same CPU, and forever once the worker is gone. The kernel itself is honest and about as fast
// as the baseline, so any speedup above 1 is the helper's doing.
// The seccomp filter kills the worker at a clone without CLONE_THREAD, so the verdict is rejected
// (a filter that allowed clone for threads' sake and looked no further would let this through).
// Separate output arenas do not help here; a PID namespace would still end the helper with the
// worker, and the test looks for "kbx-slowbar" tasks afterwards.
// The helper uses only thin system-call wrappers: it shares the worker's thread pointer (no
// CLONE_SETTLS), so it must not touch anything thread-local beyond errno.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
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

constexpr size_t kHelperStack = 256 << 10;
alignas(64) char g_helper_stack[kHelperStack];
bool g_started = false;
pid_t g_worker = 0;

// The state letter of /proc/<pid>/stat ('T' stopped, 'R' running, ...); 0 when it cannot be read.
char state_of(const char* stat_path) {
  const int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[512];
  const ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0) return 0;
  // "pid (comm) S ...": the state follows the last ')'.
  for (ssize_t i = got - 1; i > 0; --i)
    if (buf[i] == ')') return i + 2 < got ? buf[i + 2] : 0;
  return 0;
}

int slow_the_bar(void*) {
  prctl(PR_SET_NAME, "kbx-slowbar");
  setpgid(0, 0);
  char stat_path[64] = "/proc/";
  // The path of the worker's stat file, written without stdio (no locale, no locks).
  char digits[16];
  int n = 0;
  for (pid_t p = g_worker; p > 0; p /= 10) digits[n++] = static_cast<char>('0' + p % 10);
  char* out = stat_path + 6;
  while (n > 0) *out++ = digits[--n];
  const char kTail[] = "/stat";
  for (const char c : kTail) *out++ = c;
  volatile uint64_t counter = 0;
  for (;;) {
    const char state = state_of(stat_path);
    if (state == 'T' || state == 't' || state == 0 || getppid() != g_worker) {
      for (int i = 0; i < 1000000; ++i) counter = counter + 1;  // ~1 ms of burning
    } else {
      const timespec pause = {0, 100000};  // the worker runs: stay out of its way
      nanosleep(&pause, nullptr);
    }
  }
}

void start_helper() {
  g_worker = getpid();
  clone(slow_the_bar, g_helper_stack + kHelperStack,
        CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | SIGCHLD, nullptr);
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (!g_started) {
    g_started = true;
    start_helper();
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
