// The `kbench agent` family on the command line: `agent` itself, `agent report`, `agent context`.
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kbench::cli {

struct AgentCli {
  AgentOptions run;
  AgentReportOptions report;
  AgentContextOptions context;
  CLI::App* run_cmd = nullptr;
  CLI::App* report_cmd = nullptr;
  CLI::App* context_cmd = nullptr;
};

// Declares the subcommands on `app`; `cli` must outlive parsing.
void add_agent_commands(CLI::App& app, AgentCli& cli);
// The exit code of the agent subcommand that was parsed, or nullopt when none was.
std::optional<int> run_agent_commands(const AgentCli& cli);

}  // namespace kbench::cli
