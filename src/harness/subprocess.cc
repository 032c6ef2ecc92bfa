// posix_spawn + a polled wait; the child gets its own process group so a timeout kills all of it.
#include "harness/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/timer.h"

extern char** environ;

namespace kbench {

// The first three quarters and the last quarter of `max_output` bytes of what the tool wrote, with
// a line saying what was left out between them: a compiler's first error comes first (the rest
// often follows from it), a crash's cause comes last.
std::string kept_output(int fd, std::size_t max_output) {
  struct stat st {};
  fstat(fd, &st);
  const auto size = static_cast<std::size_t>(st.st_size);
  const auto read_at = [fd](std::size_t offset, std::size_t n) {
    std::string text(n, '\0');
    const ssize_t got = pread(fd, text.data(), n, static_cast<off_t>(offset));
    text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return text;
  };
  if (size <= max_output) return read_at(0, size);
  const std::size_t head = max_output / 4 * 3, tail = max_output - head;
  return read_at(0, head) + "\n[... " + std::to_string(size - head - tail) +
         " bytes of output left out ...]\n" + read_at(size - tail, tail);
}

CommandResult run_command(const std::vector<std::string>& argv, double timeout_s,
                          std::size_t max_output) {
  CommandResult result;
  const int out_fd = memfd_create("kbench-command-output", MFD_CLOEXEC);
  if (out_fd < 0) {
    result.error = std::string("memfd_create: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 2);
  sigset_t defaults;
  sigfillset(&defaults);
  pid_t pid = -1;
  const int rc = spawn_in_own_group(argv, actions, defaults, pid);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    close(out_fd);
    return result;
  }
  const double deadline = now_seconds() + timeout_s;
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    if (now_seconds() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.timed_out = true;
      break;
    }
    usleep(2000);
  }
  kill(-pid, SIGKILL);  // anything the tool left running in its group
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.output = kept_output(out_fd, max_output);
  close(out_fd);
  return result;
}

int spawn_in_own_group(const std::vector<std::string>& argv,
                       const posix_spawn_file_actions_t& actions, const sigset_t& defaults,
                       pid_t& pid) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int rc = posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawnattr_destroy(&attr);
  return rc;
}

}  // namespace kbench
