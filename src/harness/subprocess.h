// Runs a trusted tool (the compiler) as a child process with a deadline, capturing its output.
#pragma once

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

}  // namespace kbench
