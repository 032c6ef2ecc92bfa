// Runs a trusted tool (the compiler) as a child process with a deadline, capturing its output.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace kbench {

struct CommandResult {
  bool timed_out = false;
  int exit_code = -1;  // -1 when killed by a signal or not started
  // stdout and stderr interleaved; beyond `max_output` bytes, the first three quarters and the last
  // quarter of that, with a line between them saying how much was left out.
  std::string output;
  std::string error;  // why it could not start, if it could not
};

CommandResult run_command(const std::vector<std::string>& argv, double timeout_s,
                          std::size_t max_output = 16384);

// What a tool wrote to `fd` (a memfd read from its start), cut to `max_output` bytes as
// CommandResult::output is.
std::string kept_output(int fd, std::size_t max_output);

// Starts argv (argv[0] looked up on PATH when it has no slash) in a process group of its own, so
// that a kill of the group reaches everything it starts and a terminal's signals reach it only
// through its parent, with `actions` applied to its descriptors and the signals in `defaults`
// back at their default actions. Returns posix_spawnp's error number (0: started, pid set).
int spawn_in_own_group(const std::vector<std::string>& argv,
                       const posix_spawn_file_actions_t& actions, const sigset_t& defaults,
                       pid_t& pid);

}  // namespace kbench
