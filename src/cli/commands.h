// The subcommands of kbench: one options struct each, and each command file's add_X_command,
// which declares its options with their help on the command line.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "agents/llm.h"

namespace kbench::cli {

// The timing options eval, run and calibrate share: registered by add_timing_options() and checked
// and applied by timed_eval_options() (cli/timing_options.h), declared once here.
struct TimingOptions {
  std::string size = "cpu";
  int threads = 1;
  int warmup = 2;
  int iters = 5;  // the minimum; timing goes on until the CI is within 2% or the budget is spent
  int max_iters = 500;
  double time_budget_s = 10;
  std::optional<std::uint64_t> seed;  // drawn fresh when unset
};

struct ListOptions {
  bool json = false;
};

struct ProbeOptions {
  int threads = 1;
  bool json = false;
  bool force = false;  // measure again even when this machine's peaks are cached
};

// Each baseline against its reference, each workload's faithful bf16 program against the oracle,
// and the degenerate outputs against the rule: what the suite's correctness rests on.
struct ValidateOptions {
  std::vector<std::string> workloads;  // empty: every workload
  std::string size = "smoke";
  int seeds = 3;  // input sets per workload for the bf16 program
  // Input sets for the outputs whose rejection is a matter of the draw (harness/suite_checks.h);
  // unset: 24 at smoke size, 8 at the larger sizes, where each costs an oracle per input.
  std::optional<int> draws;
  std::optional<std::uint64_t> seed;
  bool json = false;
};

struct ScaffoldOptions {
  std::string workload;
};

struct EvalCommandOptions {
  std::string workload;
  std::string candidate;
  bool aa = false;       // A/A: the baseline evaluated as a candidate against itself
  bool expert = false;   // the workload's expert at its tuned (else default) configuration
  bool analyze = false;  // also the candidate's loops (kbench analyze), recorded with the result
  TimingOptions timing;
  int trials = 3;
  double timeout_s = 10;
  long long mem_limit_mb = 4096;
  bool json = false;
  bool no_record = false;
  std::string db;
};

struct RunCommandOptions {
  std::vector<std::string> workloads;
  std::string suite = "all";
  TimingOptions timing;
  bool json = false;
  bool markdown = false;    // docs/baselines.md's table instead of the console table
  std::string xla;          // scripts/xla-peer.sh --json output, for the table's XLA:CPU column
  bool no_experts = false;  // skip the expert kernels (experts/*.cpp) evaluated beside baselines
  bool no_record = false;
  // Also split each baseline's time into its library calls and the passes between them
  // (harness/breakdown.h), measured in this process after the timed run.
  bool breakdown = false;
  std::string db;
};

// Repeated A/A evaluations (the baseline against itself): how far apart the point estimates land
// and how often a CI wrongly excludes 1.0 on this machine, now.
struct CalibrateOptions {
  std::string workload;
  int runs = 10;
  TimingOptions timing;
  int trials = 1;  // correctness of the baseline is not what is calibrated
  bool json = false;
  bool no_record = false;
  std::string db;
};

struct ResultsOptions {
  std::optional<std::int64_t> id;  // this one record, whole; else the newest records
  int limit = 20;
  std::string workload;
  std::string kind;
  std::string status;
  std::string format = "table";
  bool json = false;
  std::string db;
};

struct ExportOptions {
  std::string workload;
  std::string size = "cpu";
  std::optional<std::uint64_t> seed;  // drawn fresh when unset, and printed
  std::string out;
  bool force = false;         // overwrite the files of an earlier export
  bool bf16_program = false;  // also write the workload's bf16 program's outputs
};

struct CheckOptions {
  std::string workload;
  std::string size = "cpu";
  std::optional<std::uint64_t> seed;  // default: the seed in OUTPUTS/workload.json
  std::string outputs;
  bool json = false;
  bool no_record = false;
  std::string db;
};

// The start of every agent run's key (the store's runs.key): what tells an agent run from a suite
// pass or a calibration in the same database.
inline constexpr std::string_view kAgentRunKeyPrefix = "agent ";

// `kbench agent`: an LLM generates candidates for each workload with one of four methods; every
// sample is evaluated by the standard pipeline and stored (docs/agents.md).
struct AgentOptions {
  std::string method;                  // best-of-n | iterative | iterative-context | beam
  std::vector<std::string> workloads;  // at least one
  // The LLM server and the limits of its requests (--provider, --base-url, --model,
  // --api-key-env, --max-concurrency, --request-timeout-s, --max-retries); the request log's path
  // is decided when the run starts.
  agents::ProviderOptions llm;
  // The size `kbench eval` times at: at the smoke size a call takes microseconds, and a speedup
  // there says more about per-call overheads (kbench's round trip, a library's dispatch) than about
  // the kernel (docs/agents.md, "The metrics").
  std::string size = "cpu";
  int samples = 8;  // budget per workload
  // beam: width, plans per parent, implementations per plan; menu entries dropped with this chance
  int beam_width = 2;
  int plans = 2;
  int implementations = 2;
  double menu_dropout = 0.3;
  int jobs = 0;  // evaluations in flight; 0: as many as this machine's CPUs allow
  int max_tokens = 4096;
  double temperature = 0.7;
  std::optional<std::uint64_t> seed;
  std::string context_dir;  // default: the checkout's context/
  std::string target;       // context target; default: this machine's
  std::string request_log;  // default: next to the database
  std::string json;         // the run's summary (metrics) to this file
  int threads = 1;
  double time_budget_s = 5;  // of each sample's timing phase
  // Each correct sample's loops analyzed (src/analysis) and its top loops fed back with its
  // verdict.
  bool analyze = false;
  std::string db;
};

// `kbench agent report`: the metrics of stored agent samples as Markdown, JSON or an HTML page.
struct AgentReportOptions {
  std::vector<std::int64_t> runs;   // empty: every agent run in the store
  std::string format = "markdown";  // markdown | json | html
  std::string out;                  // default: stdout
  std::string db;
};

// `kbench agent context`: writes the measured hardware summary of this machine's target into the
// context artifact (context/<target>/hardware.md) and prints the artifact's files and sizes.
struct AgentContextOptions {
  std::string target;       // default: this machine's
  std::string context_dir;  // default: the checkout's context/
  bool write = false;       // regenerate hardware.md from `kbench probe` (else only list)
  int threads = 1;
};

// `kbench tune`: the grid search over an expert's declared space (docs/experts.md).
struct TuneOptions {
  std::string workload;
  std::string size = "cpu";
  int threads = 1;
  int max_configs = 0;  // 0: the whole grid; else the default plus a seeded sample
  std::optional<std::uint64_t> seed;
  double time_budget_s = 3;  // of each point's timing
  int jobs = 0;              // evaluations in flight (compile and check in parallel)
  bool json = false;
  bool no_save = false;  // do not keep the winner as this machine's configuration
  std::string db;
};

// Each returns the process exit code. Usage problems throw UsageError (exit 2).
// One subcommand on the command line: its CLI11 node, and what runs it once parsed. Each command's
// file declares its own options (add_X_command) beside the code that reads them.
struct Subcommand {
  CLI::App* cli = nullptr;
  std::function<int()> run;
};

Subcommand add_list_command(CLI::App& app);
Subcommand add_probe_command(CLI::App& app);
Subcommand add_scaffold_command(CLI::App& app);
Subcommand add_analyze_command(CLI::App& app);
Subcommand add_eval_command(CLI::App& app);
Subcommand add_run_command(CLI::App& app);
Subcommand add_calibrate_command(CLI::App& app);
Subcommand add_results_command(CLI::App& app);
Subcommand add_export_command(CLI::App& app);
Subcommand add_check_command(CLI::App& app);
Subcommand add_validate_command(CLI::App& app);
Subcommand add_tune_command(CLI::App& app);
Subcommand add_merge_command(CLI::App& app);
Subcommand add_sweep_command(CLI::App& app);

int list_command(const ListOptions& options);
int probe_command(const ProbeOptions& options);
int scaffold_command(const ScaffoldOptions& options);
int eval_command(const EvalCommandOptions& options);
int run_command(const RunCommandOptions& options);
int calibrate_command(const CalibrateOptions& options);
int results_command(const ResultsOptions& options);
int export_command(const ExportOptions& options);
int check_command(const CheckOptions& options);
int validate_command(const ValidateOptions& options);
int tune_command(const TuneOptions& options);
int agent_command(const AgentOptions& options);
int agent_report_command(const AgentReportOptions& options);
int agent_context_command(const AgentContextOptions& options);

}  // namespace kbench::cli
