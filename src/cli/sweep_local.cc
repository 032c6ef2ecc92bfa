// The local executor: a sweep's cells as `kbench sweep cell` processes on this machine, the same
// task a Slurm array runs, so both executors leave the same files behind.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include "cli/context.h"
#include "cli/sweep.h"
#include "core/environment.h"
#include "core/stop_signals.h"
#include "harness/subprocess.h"
#include "sweep/cell_files.h"

namespace kbench::cli {
namespace {

struct Running {
  int index;
  std::chrono::steady_clock::time_point started;
};

// `kbench sweep cell DIR INDEX` in a process group of its own (so a terminal's Ctrl-C reaches it
// once, through this executor, never twice), its output appended to dir/logs/INDEX.log.
pid_t start_cell(const std::filesystem::path& dir, int index) {
  const std::string log = (dir / "logs" / (std::to_string(index) + ".log")).string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  pid_t pid = -1;
  // self_executable() is an absolute path, so no PATH lookup happens.
  const int rc =
      spawn_in_own_group({self_executable(), "sweep", "cell", dir.string(), std::to_string(index)},
                         actions, defaults, pid);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw std::runtime_error("cannot start a sweep cell: " + std::string(std::strerror(rc)));
  return pid;
}

}  // namespace

int run_local(const std::filesystem::path& dir, const sweep::Plan& plan,
              const std::vector<int>& cells, int max_parallel) {
  stop_between_units();
  std::deque<int> queue(cells.begin(), cells.end());
  std::map<pid_t, Running> running;
  const std::string host = sweep::this_host();
  int forwarded = 0, finished = 0, failed = 0;
  for (;;) {
    const int signal = stop_signal();
    // After a stop, no cell starts: what is queued stays pending for the next submission.
    if (running.empty() && (queue.empty() || signal != 0)) break;
    if (signal != 0 && forwarded == 0) {
      for (const auto& [pid, cell] : running) kill(pid, signal);
      forwarded = signal;
    }
    while (signal == 0 && !queue.empty() && static_cast<int>(running.size()) < max_parallel) {
      const int index = queue.front();
      queue.pop_front();
      running.emplace(start_cell(dir, index), Running{index, std::chrono::steady_clock::now()});
    }
    int wstatus = 0;
    const pid_t pid = waitpid(-1, &wstatus, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const sweep::Cell& cell = plan.cells[it->second.index];
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.started)
            .count();
    running.erase(it);
    ++finished;
    // The attempt this process claimed, if it got that far (a cell refused before it claimed one,
    // e.g. failed too often, has none: its own line is in the log).
    const sweep::CellFiles files(dir, cell);
    std::optional<sweep::Attempt> attempt;
    for (const sweep::Attempt& a : files.attempts())
      if (a.pid == pid && a.host == host) attempt = a;
    if (attempt && !attempt->outcome && WIFSIGNALED(wstatus)) {
      // Killed before it could say how it ended: recorded as failed on its behalf.
      attempt->outcome = sweep::Outcome::kFailed;
      attempt->exit_code = 128 + WTERMSIG(wstatus);
      attempt->message = "killed by signal " + std::to_string(WTERMSIG(wstatus));
      attempt->ended_at = utc_now_iso8601();
      files.end_attempt(*attempt);
    }
    const std::optional<sweep::Outcome> outcome = attempt ? attempt->outcome : std::nullopt;
    const std::string message =
        outcome ? attempt->message
                : "ended without an attempt (see " + (dir / "logs").string() + ")";
    if (outcome != sweep::Outcome::kDone && outcome != sweep::Outcome::kStopped) ++failed;
    std::printf("[%d/%zu] %s: %s (%.1f s)%s%s\n", finished, cells.size(), cell.name.c_str(),
                outcome ? sweep::outcome_name(*outcome) : "not run", seconds,
                message.empty() ? "" : ": ", message.c_str());
    std::fflush(stdout);
  }
  if (const int signal = stop_signal()) {
    std::fprintf(stderr, "kbench: sweep stopped by %s; the same command runs what is not done\n",
                 stop_signal_name(signal));
    return 128 + signal;
  }
  std::printf("%zu cells run, %d not done%s; merge the shards: kbench merge OUT %s/shards/*.db\n",
              cells.size(), failed, failed > 0 ? " (kbench sweep status shows why)" : "",
              dir.c_str());
  return failed > 0 ? 1 : 0;
}

}  // namespace kbench::cli
