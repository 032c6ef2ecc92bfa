// kbench: the command line. Parses arguments into one options struct per subcommand and maps
// failures to exit codes: 0 the command completed (whatever a verdict says), 2 usage error, 1
// anything else.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/agent_cli.h"
#include "cli/commands.h"
#include "cli/context.h"
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

  CLI::App app{"kbench: benchmark and evaluation harness for AI-written kernels"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");

  const std::vector<Subcommand> commands = {
      add_list_command(app),     add_probe_command(app),  add_scaffold_command(app),
      add_eval_command(app),     add_run_command(app),    add_calibrate_command(app),
      add_results_command(app),  add_export_command(app), add_check_command(app),
      add_validate_command(app), add_tune_command(app),   add_analyze_command(app),
      add_merge_command(app),
  };
  AgentCli agent;
  add_agent_commands(app, agent);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "kbench: %s (see kbench --help)\n", e.what());
    return 2;
  }

  try {
    for (const Subcommand& command : commands)
      if (*command.cli) return command.run();
    if (const std::optional<int> code = run_agent_commands(agent)) return *code;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kbench: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench: %s\n", e.what());
    return 1;
  }
  return 2;
}
