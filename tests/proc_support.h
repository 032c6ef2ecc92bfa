// A process's state as /proc tells it, for tests that look for what outlived a kill, and what a
// forked child reports through a pipe.
#pragma once

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kbench::testing {

// Whether this kernel has Landlock (its ABI version is at least 1), as the sandbox asks it.
inline bool kernel_has_landlock() {
  return syscall(SYS_landlock_create_ruleset, nullptr, 0, 1u) >= 1;
}

// The fields of /proc/<pid>/stat after the command name: state, ppid, ... (fields 3 onwards);
// empty if the process is gone.
inline std::vector<std::string> stat_fields(pid_t pid) {
  std::string stat;
  std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/stat"), stat);
  const std::size_t close_paren = stat.rfind(')');
  std::vector<std::string> fields;
  if (close_paren == std::string::npos) return fields;
  std::istringstream rest(stat.substr(close_paren + 1));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

// Running or able to run: not gone, and not a zombie (dead, waiting for a reaper).
inline bool process_alive(pid_t pid) {
  const std::vector<std::string> fields = stat_fields(pid);
  return !fields.empty() && fields[0] != "Z" && fields[0] != "X";
}

// Everything written to the pipe end `fd` until its writers close it; closes `fd`.
inline std::string read_until_closed(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(fd);
  return text;
}

}  // namespace kbench::testing
