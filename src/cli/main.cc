// kbench: the command line. Parses arguments into one options struct per subcommand and maps
// failures to exit codes: 0 the command completed (whatever a verdict says), 2 usage error, 1
// anything else.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/agent_cli.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/timing_options.h"
#include "core/environment.h"
#include "harness/build_info.h"
#include "harness/evaluator.h"
#include "harness/interop.h"

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
  // Where a candidate's worker shares kbench's user (kbench not root), this keeps kbench's
  // /proc/<pid>/environ (API keys), mem and fd entries closed to it even without Landlock.
  prctl(PR_SET_DUMPABLE, 0);
  kbench::register_build_info();

  CLI::App app{"kbench: benchmark and evaluation harness for AI-written kernels"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");

  ListOptions list;
  auto* list_cmd = app.add_subcommand("list", "List the workloads");
  list_cmd->add_flag("--json", list.json, "Print a JSON array");

  ProbeOptions probe;
  auto* probe_cmd = app.add_subcommand(
      "probe", "Measure this machine's compute and memory peaks (cached per machine)");
  probe_cmd->add_option("--threads", probe.threads, "Threads to measure with")
      ->capture_default_str();
  probe_cmd->add_flag("--force", probe.force, "Measure again even when cached");
  probe_cmd->add_flag("--json", probe.json, "Print JSON");

  ScaffoldOptions scaffold;
  auto* scaffold_cmd =
      app.add_subcommand("scaffold", "Print a naive, correct candidate to start from");
  scaffold_cmd->add_option("workload", scaffold.workload, "Workload id or name (8p or 8p_GEMM)")
      ->required();

  EvalCommandOptions eval;
  auto* eval_cmd = app.add_subcommand(
      "eval", "Evaluate a candidate: compiles? correct? faster than the baseline?");
  eval_cmd->add_option("--workload,-w", eval.workload, "Workload id or name")->required();
  eval_cmd->add_option("--candidate,-c", eval.candidate, "Candidate C++ source file");
  eval_cmd->add_flag("--aa", eval.aa,
                     "A/A check: evaluate the baseline as a candidate against itself");
  eval_cmd->add_flag("--expert", eval.expert,
                     "Evaluate the workload's expert (experts/), at this machine's tuned "
                     "configuration or its default");
  add_timing_options(eval_cmd, eval.timing, "pairs", "");
  eval_cmd->add_option("--trials", eval.trials, "Correctness input sets (fresh seeds)")
      ->capture_default_str();
  eval_cmd->add_option("--timeout-s", eval.timeout_s, "Wall-time limit per kb_run call")
      ->capture_default_str();
  eval_cmd
      ->add_option("--mem-limit-mb", eval.mem_limit_mb,
                   "Address-space limit of the candidate's process")
      ->capture_default_str();
  eval_cmd->add_flag("--json", eval.json, "Print the result as one JSON object");
  eval_cmd->add_flag("--no-record", eval.no_record, "Do not write the result to the database");
  eval_cmd->add_option("--db", eval.db, "Results database");

  RunCommandOptions run;
  auto* run_cmd =
      app.add_subcommand("run", "Time the baselines (each checked against its reference first)");
  run_cmd->add_option("--workload,-w", run.workloads, "Workload ids or names (default: the suite)");
  run_cmd->add_option("--suite", run.suite, "all, production or kernelbench")
      ->capture_default_str();
  add_timing_options(run_cmd, run.timing, "calls", " per workload");
  run_cmd->add_flag("--json", run.json, "Print JSON");
  run_cmd->add_flag("--markdown", run.markdown,
                    "Print docs/baselines.md's table (machine, sizes, roofline, XLA:CPU, TPU)");
  run_cmd
      ->add_option("--xla", run.xla,
                   "XLA:CPU timings for --markdown (scripts/xla-peer.sh --json FILE)")
      ->type_name("FILE");
  run_cmd->add_flag("--no-experts", run.no_experts,
                    "Do not evaluate the expert kernels beside their baselines");
  run_cmd->add_flag("--no-record", run.no_record, "Do not write results to the database");
  run_cmd->add_option("--db", run.db, "Results database");

  CalibrateOptions calibrate;
  auto* calibrate_cmd = app.add_subcommand(
      "calibrate",
      "Repeated A/A runs (the baseline against itself): how far this machine's speedups scatter");
  calibrate_cmd->add_option("--workload,-w", calibrate.workload, "Workload id or name")->required();
  calibrate_cmd->add_option("--runs", calibrate.runs, "A/A evaluations")->capture_default_str();
  add_timing_options(calibrate_cmd, calibrate.timing, "pairs", " per run");
  calibrate_cmd->add_option("--trials", calibrate.trials, "Correctness input sets per run")
      ->capture_default_str();
  calibrate_cmd->add_flag("--json", calibrate.json, "Print one JSON object");
  calibrate_cmd->add_flag("--no-record", calibrate.no_record,
                          "Do not write the runs to the database (kind 'calibrate')");
  calibrate_cmd->add_option("--db", calibrate.db, "Results database");

  ResultsOptions results;
  auto* results_cmd = app.add_subcommand("results", "Show recent records from the database");
  results_cmd->add_option("--limit,-n", results.limit, "How many (newest first)")
      ->capture_default_str();
  results_cmd->add_option("--workload,-w", results.workload, "Only this workload");
  results_cmd->add_option("--kind", results.kind,
                          "Only 'eval', 'run', 'check' or 'calibrate' records");
  results_cmd->add_option("--format", results.format, "table, json or csv")->capture_default_str();
  results_cmd->add_flag("--json", results.json, "Same as --format json");
  results_cmd->add_option("--db", results.db, "Results database");

  ExportOptions export_options;
  auto* export_cmd = app.add_subcommand("export",
                                        "Write a workload's inputs and fp32 oracle outputs as .npy "
                                        "files, for kernels in other frameworks");
  export_cmd->add_option("--workload,-w", export_options.workload, "Workload id or name")
      ->required();
  export_cmd->add_option("--size", export_options.size, "smoke, cpu or full")
      ->capture_default_str();
  export_cmd->add_option("--seed", export_options.seed,
                         "Input seed (default: drawn fresh and printed)");
  export_cmd->add_option("--out,-o", export_options.out, "Directory to write (created if missing)")
      ->type_name("DIR")
      ->required();
  export_cmd->add_flag("--force", export_options.force, "Overwrite the files of an earlier export");
  export_cmd->add_flag(
      "--bf16-program", export_options.bf16_program,
      "Also write the outputs of the workload's bf16 program (its emulation of the "
      "original's arithmetic) in DIR/" +
          std::string(kbench::kProgramDir));
  export_cmd->footer(
      std::string("Writes, in DIR:\n"
                  "  <input>.npy           each input (bf16 as float32 holding the bf16 values, "
                  "i32 as int32)\n"
                  "  ") +
      kbench::kOracleDir + "/<output>.npy   the fp32 oracle's outputs (float32)\n  " +
      kbench::kManifestFile +
      "         id, size, seed, shapes, dtypes, parameters, the original's config,\n"
      "                        input order, tolerances\n"
      "See docs/interop.md.");

  CheckOptions check;
  auto* check_cmd = app.add_subcommand(
      "check",
      "Check outputs computed elsewhere (.npy) against the oracle, by the rule of `kbench eval`");
  check_cmd->add_option("--workload,-w", check.workload, "Workload id or name")->required();
  check_cmd->add_option("--size", check.size, "smoke, cpu or full (as exported)")
      ->capture_default_str();
  check_cmd->add_option(
      "--seed", check.seed,
      "Seed the inputs were exported with (default: the seed in DIR/workload.json)");
  check_cmd->add_option("--outputs", check.outputs, "Directory holding the output files")
      ->type_name("DIR")
      ->required();
  check_cmd->add_flag("--json", check.json, "Print the result as one JSON object");
  check_cmd->add_flag("--no-record", check.no_record, "Do not write the result to the database");
  check_cmd->add_option("--db", check.db, "Results database");
  check_cmd->footer(
      kbench::output_naming_rules() +
      "\nA missing or malformed file gets the verdict 'incorrect' (exit 0), like wrong values.\n"
      "See docs/interop.md.");

  ValidateOptions validate;
  auto* validate_cmd = app.add_subcommand(
      "validate",
      "Check each baseline against its reference, each workload's bf16 program and degenerate "
      "outputs against its rule");
  validate_cmd->add_option("--workload,-w", validate.workloads,
                           "Workload ids or names (default: all)");
  validate_cmd->add_option("--size", validate.size, "smoke, cpu or full")->capture_default_str();
  validate_cmd->add_option("--seeds", validate.seeds, "Input sets for the bf16 program")
      ->capture_default_str();
  validate_cmd->add_option("--seed", validate.seed, "First seed (default: drawn fresh)");
  validate_cmd->add_flag("--json", validate.json, "Print a JSON array");
  validate_cmd->footer(
      "Columns are fractions of the workload's tolerance used (below 1 passes): the baseline "
      "against the\nreference (f32 and bf16 outputs), the bf16 program against the oracle (worst "
      "seed), and the\ndegenerate output that came closest to passing (it must be above 1). Exit "
      "1 when any workload fails.");

  TuneOptions tune;
  auto* tune_cmd = app.add_subcommand(
      "tune", "Grid-search an expert kernel's declared space; keep the fastest correct point");
  tune_cmd->add_option("--workload,-w", tune.workload, "Workload id or name")->required();
  tune_cmd->add_option("--size", tune.size, "smoke, cpu or full")->capture_default_str();
  tune_cmd->add_option("--threads", tune.threads, "Threads")->capture_default_str();
  tune_cmd
      ->add_option("--max-configs", tune.max_configs,
                   "At most this many points: the default plus a seeded sample (0: all)")
      ->capture_default_str();
  tune_cmd->add_option("--seed", tune.seed, "Seed of the inputs and of the sample of points");
  tune_cmd->add_option("--time-budget-s", tune.time_budget_s, "Seconds of timing per point")
      ->capture_default_str();
  tune_cmd->add_option("--jobs", tune.jobs, "Evaluations in flight (0: as the CPUs allow)")
      ->capture_default_str();
  tune_cmd->add_flag("--json", tune.json, "Print one JSON object");
  tune_cmd->add_flag("--no-save", tune.no_save, "Do not keep the winner for this machine");
  tune_cmd->add_option("--db", tune.db, "Results database");

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
    if (*list_cmd) return list_command(list);
    if (*probe_cmd) return probe_command(probe);
    if (*scaffold_cmd) return scaffold_command(scaffold);
    if (*eval_cmd) return eval_command(eval);
    if (*run_cmd) return run_command(run);
    if (*calibrate_cmd) return calibrate_command(calibrate);
    if (*results_cmd) return results_command(results);
    if (*export_cmd) return export_command(export_options);
    if (*check_cmd) return check_command(check);
    if (*validate_cmd) return validate_command(validate);
    if (*tune_cmd) return tune_command(tune);
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
