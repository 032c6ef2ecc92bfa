// What the subcommands share: usage errors, the worker's path, the store, cached machine peaks and
// the progress line.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "experts/expert.h"
#include "harness/eval_result.h"
#include "harness/evaluator.h"
#include "probe/probe.h"
#include "store/machine_cache.h"
#include "store/store.h"
#include "workloads/workload.h"

namespace kbench::cli {

// A problem with what the user typed (unknown workload, missing file, bad value): one line, exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const Workload& workload_or_usage_error(const std::string& id_or_name);
// The workloads `-w` names (each once, in the order given), else those of `suite` (all,
// production or kernelbench): what `kbench run` and `kbench sweep` take.
std::vector<const Workload*> selected_workloads(const std::vector<std::string>& ids,
                                                const std::string& suite);
Size size_or_usage_error(const std::string& text);
// A candidate source must be a file kbench can read, not a directory, a device or a pipe: names the
// path and what it is instead.
void candidate_file_or_usage_error(const std::string& path);
// The workload's expert kernel (experts/), or a usage error naming the workloads that have one.
experts::ExpertKernel expert_or_usage_error(const Workload& workload);
// An LLM server's base URL: empty (the provider's public endpoint) or http:// or https:// and a
// host. A typo such as "localhost:8088/v1" otherwise fails only after every retry of the first
// request, with a run already begun in the store.
void base_url_or_usage_error(const std::string& option, const std::string& url);
// --threads must be between 1 and the number of CPUs this process may run on (workers are pinned).
int threads_or_usage_error(int threads);
// A duration option: a finite number of seconds from `lowest` to `highest`. NaN and infinity are
// refused, since a deadline that never comes is no deadline and the worker's CPU-time limit is
// derived from these; so is a value too large to be one.
double seconds_or_usage_error(const std::string& option, double seconds, double lowest,
                              double highest);
// The bounds of the duration options: a call, a timing phase, an HTTP request.
inline constexpr double kShortestTimeoutS = 0.001, kLongestCallS = 3600, kLongestBudgetS = 86400;

// EvalOptions with the size, threads, warmup, iteration bounds, time budget and seed of `options`;
// throws UsageError for a value out of range.
EvalOptions timed_eval_options(const TimingOptions& options);

// This executable's path, for the processes and batch scripts that run kbench again.
std::string self_executable();
// kbench-worker beside this executable ($KBENCH_WORKER overrides).
std::string worker_executable();

// The database --db names (else default_db_path()), for a command that records; a directory is a
// usage error.
ResultStore open_store(const std::string& db_option);
// The same for a command that only reads: never created, migrated or written (a read-only mount).
ResultStore open_store_for_reading(const std::string& db_option);

// Where this process finds and keeps its machine facts (MachineCache::from_environment).
MachineCache& machine_cache();
// Keeps a fact just measured in the machine cache; when the cache cannot be written, says so on
// stderr once per process and carries on with the value in hand.
void remember(const std::string& key, const std::string& value);
// One line on stderr, terminal or not, before a measurement of the machine that takes seconds, so
// a command is never silent for that long without saying why.
void say_measuring(const std::string& what, bool again);
// The fact cached under `key` whose value `usable` accepts, or else the value `measure` returns
// (after say_measuring(what)), kept under `key`; with `force_measure` it is measured whatever is
// cached. Processes needing one fact at once take turns (MachineCache::hold): one measures, the
// others say they wait, then read its value, so no two measurements of the machine share its cores.
CachedFact cached_or_measured(const std::string& key, const std::string& what,
                              const std::function<bool(const std::string&)>& usable,
                              const std::function<std::string()>& measure,
                              bool force_measure = false);

// This machine's peaks for `threads` threads and when they were measured, from the machine cache,
// measured (and cached) when missing or when `force_measure`.
struct MachinePeaks {
  PeakReport peaks;
  std::string measured_at;
};
MachinePeaks machine_peaks(int threads, bool force_measure = false);
// The peaks measured now, each figure kept at the higher of this and the cached measurement (in
// the cache too): for a cached probe that a baseline showed too slow.
MachinePeaks machine_peaks_measured_again(int threads);

// What `eval`'s baseline runs and is measured against, for its workload, size and threads: the
// library path per GEMM shape class and per convolution, each the fastest measured
// (eval.library_plan, ops::set_library_plan's encoding; also installed in this process, for the
// in-process oracle), and the library ceiling (eval.library_ceiling). The baseline's GEMM classes
// are found by running it under no plan, its library calls by running it under the GEMM plan (each
// cached per kbench build); each GEMM class and convolution is timed on every library path once
// per machine and kept in the machine cache like the peaks. Progress goes to stderr.
void resolve_baseline(EvalOptions& eval);

// EvalOptions for evaluating candidates of `workload` with this executable's worker and cache
// directory, the baseline already resolved (resolve_baseline): what the commands that evaluate many
// candidates of one workload (agent, tune) share.
EvalOptions resolved_eval_options(const Workload& workload, Size size, int threads,
                                  double time_budget_s);

// One evaluation's outcome on stdout: the verdict block, or with `json` one object (samples
// included, source left out). Shared by eval and check so both report alike.
void print_result(const EvalResult& result, bool json);

// A single self-rewriting status line on stderr when it is a terminal; silent otherwise.
class ProgressLine {
 public:
  explicit ProgressLine(std::string prefix);
  ~ProgressLine();
  void update(const std::string& text);

 private:
  std::string prefix_;
  bool enabled_;
};

}  // namespace kbench::cli
