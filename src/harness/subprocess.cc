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

#include "core/terminal_text.h"
#include "core/timer.h"

extern char** environ;

namespace kbench {

// The first three quarters and the last quarter of `max_output` bytes of what the tool wrote, with
// a line saying what was left out between them: a compiler's first errors come first (the rest
// often follow from them), a crash's cause comes last. In the head, each line keeps at most a
// sixteenth of `max_output`: a compiler quoting a binary "source" writes lines of tens of
// kilobytes, and one of them would otherwise take the place of every error after it.
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
  const std::size_t head_budget = max_output / 4 * 3,
                    tail_start = size - (max_output - head_budget);
  const std::size_t max_line = std::max<std::size_t>(max_output / 16, 1);

  std::string head, line;
  std::size_t line_bytes = 0;  // of the line being read, kept in `line` or not
  std::size_t offset = 0, kept_up_to = 0;
  bool full = false;
  // Adds the line read so far to the head when it fits; false when it does not.
  const auto keep_line = [&](std::size_t next_offset) {
    const std::string piece = clip_line(line, max_line, line_bytes - line.size()) + "\n";
    if (head.size() + piece.size() > head_budget) return false;
    head += piece;
    kept_up_to = next_offset;
    line.clear();
    line_bytes = 0;
    return true;
  };
  constexpr std::size_t kChunk = 1 << 16;
  while (!full && offset < tail_start) {
    const std::string chunk = read_at(offset, std::min(kChunk, tail_start - offset));
    if (chunk.empty()) break;
    for (std::size_t at = 0; !full && at < chunk.size();) {
      const std::size_t eol = chunk.find('\n', at);
      const std::size_t end = eol == std::string::npos ? chunk.size() : eol;
      line.append(chunk, at, std::min(end - at, max_line - line.size()));  // never past max_line
      line_bytes += end - at;
      if (eol == std::string::npos) break;
      full = !keep_line(offset + eol + 1);
      at = eol + 1;
    }
    offset += chunk.size();
  }
  if (!full && line_bytes > 0 && offset >= tail_start) keep_line(tail_start);  // runs into the tail
  std::string kept = head;
  if (kept_up_to < tail_start)
    kept += "[... " + std::to_string(tail_start - kept_up_to) + " bytes of output left out ...]\n";
  return kept + read_at(tail_start, size - tail_start);
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
