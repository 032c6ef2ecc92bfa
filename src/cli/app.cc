#include "cli/app.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>

#include <CLI/CLI.hpp>

#include "cli/agent_cli.h"
#include "cli/commands.h"
#include "cli/context.h"

namespace kbench::cli {
namespace {

// One line naming the operation, the path and the reason: "cannot create directories '/x/y': Not
// a directory". The standard library's own message ("filesystem error: cannot create directories:
// Not a directory [/x/y]") is kept where it does not have that form.
std::string filesystem_error_line(const std::filesystem::filesystem_error& e) {
  std::string_view what = e.what();
  constexpr std::string_view kPrefix = "filesystem error: ";
  if (what.starts_with(kPrefix)) what.remove_prefix(kPrefix.size());
  const std::string reason = e.code().message();
  const std::size_t reason_at = what.find(": " + reason);
  if (e.path1().empty() || reason_at == std::string_view::npos) return std::string(what);
  std::string line = std::string(what.substr(0, reason_at)) + " '" + e.path1().string() + "'";
  if (!e.path2().empty()) line += " to '" + e.path2().string() + "'";
  return line + ": " + reason;
}

// "kbench eval --help" for a mistake in eval's arguments: the help of the command being parsed,
// which lists the options it takes, not only the command names.
std::string help_hint(const CLI::App& app) {
  std::string command = app.get_name();
  for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    command += " " + at->get_name();
  }
  return "(see " + command + " --help)";
}

// The first argument when it names no command ("kbench evl"); CLI11 would only say that a command
// is required.
std::optional<std::string> unknown_command(const CLI::App& app,
                                           const std::vector<std::string>& args) {
  if (args.empty() || args.front().empty() || args.front().front() == '-') return std::nullopt;
  const auto named = [&](const CLI::App* command) { return command->check_name(args.front()); };
  if (!app.get_subcommands(named).empty()) return std::nullopt;
  return args.front();
}

// "--iters: '99999999999' is out of range" for CLI11's "Could not convert: --iters = 99999999999",
// which says neither what was wrong nor what would do. Values that fail to convert are numbers out
// of their type's range (whole numbers are checked for digits first) or no number at all.
std::optional<std::string> conversion_error_line(const CLI::App& app, std::string_view what) {
  constexpr std::string_view kPrefix = "Could not convert: ";
  const std::size_t equals = what.find(" = ");
  if (!what.starts_with(kPrefix) || equals == std::string_view::npos) return std::nullopt;
  const std::string name(what.substr(kPrefix.size(), equals - kPrefix.size()));
  const std::string value(what.substr(equals + 3));
  std::string type;
  for (const CLI::App* at = &app;; at = at->get_subcommands().front()) {
    if (const CLI::Option* option = at->get_option_no_throw(name)) type = option->get_type_name();
    if (at->get_subcommands().empty()) break;
  }
  const bool whole = type.starts_with("INT") || type.starts_with("UINT");
  return name + ": '" + value + "' " + (whole ? "is out of range" : "is not a number");
}

// CLI11 reads an integer in the base its prefix names ("--iters 010" would time 8 calls and
// "--samples 0x10" ask for 16 samples) and a 64-bit one past its range as the largest (run
// 9223372036854775807 for "--run 99999999999999999999"). Every whole-number option of every
// command, present or future, takes plain decimal instead ("010" is 10) within 64 bits; CLI11
// still refuses what overflows a narrower option. Seeds have their own check (seed_validator).
void read_integers_in_decimal(CLI::App& command) {
  const CLI::Validator decimal(
      [](std::string& text) -> std::string {
        const std::size_t digits_at = text.starts_with('-') ? 1 : 0;
        if (text.size() == digits_at ||
            text.find_first_not_of("0123456789", digits_at) != text.npos)
          return "'" + text + "' is not a whole number in decimal";
        std::int64_t value = 0;
        if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc())
          return "'" + text + "' is out of range";
        text = std::to_string(value);
        return "";
      },
      "");
  for (CLI::Option* option : command.get_options()) {
    if (option->get_type_name().starts_with("INT")) option->transform(decimal);
  }
  for (CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; }))
    read_integers_in_decimal(*sub);
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::string* failure) {
  CLI::App app{"kbench: benchmark and evaluation harness for AI-written kernels", "kbench"};
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
  read_integers_in_decimal(app);

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
    if (const std::optional<std::string> unknown = unknown_command(app, args))
      return fail("unknown command '" + *unknown + "' " + help_hint(app), 2);
    return fail(conversion_error_line(app, e.what()).value_or(e.what()) + " " + help_hint(app), 2);
  }

  try {
    for (const Subcommand& command : commands)
      if (*command.cli) return command.run();
    if (const std::optional<int> code = run_agent_commands(agent)) return *code;
  } catch (const UsageError& e) {
    return fail(e.what(), 2);
  } catch (const std::filesystem::filesystem_error& e) {
    return fail(filesystem_error_line(e), 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
  return 2;
}

}  // namespace kbench::cli
