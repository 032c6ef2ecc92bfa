#include "cli/app.h"

#include <cstdio>
#include <exception>
#include <optional>

#include <CLI/CLI.hpp>

#include "cli/agent_cli.h"
#include "cli/commands.h"
#include "cli/context.h"

namespace kbench::cli {

int run_cli(const std::vector<std::string>& args, std::string* failure) {
  CLI::App app{"kbench: benchmark and evaluation harness for AI-written kernels"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");

  const std::vector<Subcommand> commands = {
      add_list_command(app),     add_probe_command(app),  add_scaffold_command(app),
      add_eval_command(app),     add_run_command(app),    add_calibrate_command(app),
      add_results_command(app),  add_export_command(app), add_check_command(app),
      add_validate_command(app), add_tune_command(app),   add_analyze_command(app),
      add_merge_command(app),    add_sweep_command(app),
  };
  AgentCli agent;
  add_agent_commands(app, agent);

  const auto fail = [&](const std::string& line, int code) {
    std::fprintf(stderr, "kbench: %s\n", line.c_str());
    if (failure) *failure = line;
    return code;
  };
  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + " (see kbench --help)", 2);
  }

  try {
    for (const Subcommand& command : commands)
      if (*command.cli) return command.run();
    if (const std::optional<int> code = run_agent_commands(agent)) return *code;
  } catch (const UsageError& e) {
    return fail(e.what(), 2);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
  return 2;
}

}  // namespace kbench::cli
