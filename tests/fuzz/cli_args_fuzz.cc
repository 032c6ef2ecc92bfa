// libFuzzer target for the command line's values: kbench's options structs (cli/commands.h)
// declared with CLI11 as src/cli/main.cc declares them, fed an argv made from the input (one
// argument per line). Parsing must succeed or throw CLI::ParseError, the only exceptions main()
// catches around app.parse(); anything else would end kbench with std::terminate. The subcommands'
// own checks of the values (ranges, workload names) run after parsing, in the commands.
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/timing_options.h"

namespace {

using namespace kbench::cli;

// The option names and types of main.cc (help text left out: it does not affect parsing).
struct Options {
  ProbeOptions probe;
  ScaffoldOptions scaffold;
  EvalCommandOptions eval;
  RunCommandOptions run;
  CalibrateOptions calibrate;
  ResultsOptions results;
  ExportOptions export_options;
  CheckOptions check;
  ValidateOptions validate;
};

void declare(CLI::App& app, Options& o) {
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all");
  auto* list = app.add_subcommand("list");
  bool list_json = false;
  list->add_flag("--json", list_json);

  auto* probe = app.add_subcommand("probe");
  probe->add_option("--threads", o.probe.threads)->capture_default_str();
  probe->add_flag("--force", o.probe.force);
  probe->add_flag("--json", o.probe.json);

  app.add_subcommand("scaffold")->add_option("workload", o.scaffold.workload)->required();

  auto* eval = app.add_subcommand("eval");
  eval->add_option("--workload,-w", o.eval.workload)->required();
  eval->add_option("--candidate,-c", o.eval.candidate);
  eval->add_flag("--aa", o.eval.aa);
  add_timing_options(eval, o.eval.timing, "pairs", "");
  eval->add_option("--trials", o.eval.trials)->capture_default_str();
  eval->add_option("--timeout-s", o.eval.timeout_s)->capture_default_str();
  eval->add_option("--mem-limit-mb", o.eval.mem_limit_mb)->capture_default_str();
  eval->add_flag("--json", o.eval.json);
  eval->add_flag("--no-record", o.eval.no_record);
  eval->add_option("--db", o.eval.db);

  auto* run = app.add_subcommand("run");
  run->add_option("--workload,-w", o.run.workloads);
  run->add_option("--suite", o.run.suite)->capture_default_str();
  add_timing_options(run, o.run.timing, "calls", " per workload");
  run->add_flag("--json", o.run.json);
  run->add_flag("--markdown", o.run.markdown);
  run->add_option("--xla", o.run.xla)->type_name("FILE");
  run->add_flag("--no-record", o.run.no_record);
  run->add_option("--db", o.run.db);

  auto* calibrate = app.add_subcommand("calibrate");
  calibrate->add_option("--workload,-w", o.calibrate.workload)->required();
  calibrate->add_option("--runs", o.calibrate.runs)->capture_default_str();
  add_timing_options(calibrate, o.calibrate.timing, "pairs", " per run");
  calibrate->add_option("--trials", o.calibrate.trials)->capture_default_str();
  calibrate->add_flag("--json", o.calibrate.json);
  calibrate->add_flag("--no-record", o.calibrate.no_record);
  calibrate->add_option("--db", o.calibrate.db);

  auto* results = app.add_subcommand("results");
  results->add_option("--limit,-n", o.results.limit)->capture_default_str();
  results->add_option("--workload,-w", o.results.workload);
  results->add_option("--kind", o.results.kind);
  results->add_option("--format", o.results.format)->capture_default_str();
  results->add_flag("--json", o.results.json);
  results->add_option("--db", o.results.db);

  auto* export_cmd = app.add_subcommand("export");
  export_cmd->add_option("--workload,-w", o.export_options.workload)->required();
  export_cmd->add_option("--size", o.export_options.size)->capture_default_str();
  export_cmd->add_option("--seed", o.export_options.seed);
  export_cmd->add_option("--out,-o", o.export_options.out)->type_name("DIR")->required();
  export_cmd->add_flag("--force", o.export_options.force);

  auto* check = app.add_subcommand("check");
  check->add_option("--workload,-w", o.check.workload)->required();
  check->add_option("--size", o.check.size)->capture_default_str();
  check->add_option("--seed", o.check.seed);
  check->add_option("--outputs", o.check.outputs)->type_name("DIR")->required();
  check->add_flag("--json", o.check.json);
  check->add_flag("--no-record", o.check.no_record);
  check->add_option("--db", o.check.db);

  auto* validate = app.add_subcommand("validate");
  validate->add_option("--workload,-w", o.validate.workloads);
  validate->add_option("--size", o.validate.size)->capture_default_str();
  validate->add_option("--seeds", o.validate.seeds)->capture_default_str();
  validate->add_option("--seed", o.validate.seed);
  validate->add_flag("--json", o.validate.json);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // argv as the kernel passes it: "kbench", then one argument per line. A NUL ends an argument
  // early, as it would in a real argv.
  std::vector<std::string> args{"kbench"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.push_back(current.c_str());
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  args.push_back(current.c_str());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  CLI::App app{"kbench"};
  Options options;
  declare(app, options);
  try {
    app.parse(static_cast<int>(args.size()), argv.data());
  } catch (const CLI::ParseError&) {
    // main() prints it and exits 2 (or prints help).
  }
  return 0;
}
