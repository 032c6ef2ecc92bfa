// The subcommands of kbench, one options struct each (declared with defaults and help in main.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench::cli {

struct ListOptions {
  bool json = false;
};

struct ProbeOptions {
  int threads = 1;
  bool json = false;
  bool force = false;  // measure again even when this machine's peaks are cached
  std::string db;
};

// Each baseline against its reference, each workload's faithful bf16 program against the oracle,
// and the degenerate outputs against the rule: what the suite's correctness rests on.
struct ValidateOptions {
  std::vector<std::string> workloads;  // empty: every workload
  std::string size = "smoke";
  int seeds = 3;  // input sets per workload for the bf16 program
  std::optional<std::uint64_t> seed;
  bool json = false;
};

struct ScaffoldOptions {
  std::string workload;
};

struct EvalCommandOptions {
  std::string workload;
  std::string candidate;
  bool aa = false;  // A/A: the baseline evaluated as a candidate against itself
  std::string size = "cpu";
  int threads = 1;
  int warmup = 2;
  int iters = 5;  // the minimum; timing goes on until the CI is within 2% or the budget is spent
  int max_iters = 500;
  double time_budget_s = 10;
  int trials = 3;
  double timeout_s = 10;
  long long mem_limit_mb = 4096;
  std::optional<std::uint64_t> seed;
  bool json = false;
  bool no_record = false;
  std::string db;
};

struct RunCommandOptions {
  std::vector<std::string> workloads;
  std::string suite = "all";
  std::string size = "cpu";
  int threads = 1;
  int warmup = 2;
  int iters = 5;
  int max_iters = 500;
  double time_budget_s = 10;
  std::optional<std::uint64_t> seed;
  bool json = false;
  bool markdown = false;  // docs/baselines.md's table instead of the console table
  std::string xla;        // scripts/xla-peer.sh --json output, for the table's XLA:CPU column
  bool no_record = false;
  std::string db;
};

// Repeated A/A evaluations (the baseline against itself): how far apart the point estimates land
// and how often a CI wrongly excludes 1.0 on this machine, now.
struct CalibrateOptions {
  std::string workload;
  int runs = 10;
  std::string size = "cpu";
  int threads = 1;
  int warmup = 2;
  int iters = 5;
  int max_iters = 500;
  double time_budget_s = 10;
  int trials = 1;  // correctness of the baseline is not what is calibrated
  std::optional<std::uint64_t> seed;
  bool json = false;
  bool no_record = false;
  std::string db;
};

struct ResultsOptions {
  int limit = 20;
  std::string workload;
  std::string kind;
  std::string format = "table";
  bool json = false;
  std::string db;
};

struct ExportOptions {
  std::string workload;
  std::string size = "cpu";
  std::optional<std::uint64_t> seed;  // drawn fresh when unset, and printed
  std::string out;
  bool force = false;  // overwrite the files of an earlier export
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

// Each returns the process exit code. Usage problems throw UsageError (exit 2).
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

}  // namespace kbench::cli
