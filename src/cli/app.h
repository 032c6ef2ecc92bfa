// The kbench command line as a function: main() runs it once for the process, and a sweep's cell
// runs its own command line through it in the same process (so a Slurm task's SIGTERM reaches the
// command that handles it, with no process in between).
#pragma once

#include <string>
#include <vector>

namespace kbench::cli {

// Parses `args` (without the program name) and runs the subcommand. Returns the exit code: 0 the
// command completed (whatever a verdict says), 2 usage error, 1 anything else, 128 + a signal that
// stopped it. A failure is printed on stderr as one line, which `failure`, when given, receives.
int run_cli(const std::vector<std::string>& args, std::string* failure = nullptr);

}  // namespace kbench::cli
