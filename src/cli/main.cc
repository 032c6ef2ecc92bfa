// kbench: the process's setup (OpenBLAS's kernels, SIGPIPE, the stop signals, a closed /proc
// entry), then the command line (cli/app.h), whose exit code is the process's.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/app.h"
#include "core/environment.h"
#include "core/stop_signals.h"
#include "harness/build_info.h"

namespace {

// OpenBLAS picks its kernels when it loads, before main(), and mis-detects some CPUs it is older
// than. When the user has not chosen, name the kernel family matching the ISA and restart once so
// the choice applies to kbench (the in-process oracle) and, through the environment, to every
// worker.
void ensure_openblas_coretype(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE")) return;
  const char* coretype = kbench::cpu_has("avx512f") ? "SkylakeX"
                         : kbench::cpu_has("avx2")  ? "Haswell"
                                                    : nullptr;
  if (!coretype) return;
  setenv("OPENBLAS_CORETYPE", coretype, 1);
  execv("/proc/self/exe",
        argv);  // returns only on failure; then carry on with OpenBLAS's own choice
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kbench::cli;
  ensure_openblas_coretype(argv);
  signal(SIGPIPE, SIG_IGN);  // a dead worker's socket must give an error, not kill kbench
  kbench::install_stop_signals();
  // Where a candidate's worker shares kbench's user (kbench not root), this keeps kbench's
  // /proc/<pid>/environ (API keys), mem and fd entries closed to it even without Landlock.
  prctl(PR_SET_DUMPABLE, 0);
  kbench::register_build_info();

  return run_cli(std::vector<std::string>(argv + 1, argv + argc));
}
