// The aggregate metrics of agent samples (the JAXBench paper's and KernelBench's), computed per
// method and overall: pure functions of the stored samples, shared by `kbench agent --json` and
// `kbench agent report`.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "store/agent_sample.h"

namespace kbench::agents {

// Definitions, for one method's samples (a "workload" is a distinct AgentSample::workload; samples
// of several runs of the same method on a workload pool):
// - per_sample_correctness = correct_samples / samples (0 with no samples).
// - workloads: distinct workloads with at least one sample; solved: workloads with at least one
//   sample whose status is "correct".
// - best speedup of a workload: the largest speedup among its correct samples; nullopt when it has
//   none (unsolved, or solved without a timing). A speedup that is not a finite number > 0 counts
//   as absent.
// - geomean_speedup: the geometric mean over the workloads of max(1, best speedup), an unsolved
//   workload (or one without a timing) counting 1. The 1x floor: a user keeps the baseline when the
//   agent found nothing faster. 1 when there are no workloads (the baseline, kept).
// - fast_p, p in {0, 1, 1.5, 2}: the fraction of workloads whose best speedup is > p; for p = 0
//   every solved workload counts, timed or not, so fast_0 = solved / workloads (KernelBench's
//   fast_0 is correctness). 0 with no workloads.
// - significantly_faster: the share of workloads with a correct sample whose own verdict is
//   "faster" (its speedup's 95% CI above 1 by the claim margin, docs/evaluation.md). fast_1 takes
//   the largest of a workload's point estimates, and a kernel that only matches the baseline lands
//   above 1 on about half of its evaluations, so n such samples make fast_1 count the workload with
//   probability 1 - 2^-n; here each one makes a false claim only as often as an A/A check does.
// - fast_p_at[N]: fast_p computed from each workload's samples with index < N only (the first N of
//   the budget), for every N of kFastPBudgets up to the largest number of samples any workload has.
// - failures: the number of samples of each non-correct status ("compile_error", "runtime_error",
//   "incorrect", "timeout", "rejected", "no_code", "llm_error", or whatever other string appears),
//   plus "slower": correct samples whose speedup is <= 1 or absent. The kFailureKinds are always
//   present (0 when none); other statuses appear when seen.
// - best_speedup: every workload of the method -> its best speedup (nullopt as above).
// - correctness_by_round: (round, fraction of that round's samples that are correct), ascending by
//   round.
// - prompt_tokens, completion_tokens, llm_seconds: sums over the samples (llm_seconds of
// latency_s).
//
// Overall: the same over all samples of all methods, a workload being a distinct workload across
// methods: it is solved overall when any method solved it, its best speedup is the best of all
// methods, and fast_p@N keeps the samples with index < N of every method (each method given the
// first N of its budget). Rounds pool by number across methods.
struct MethodMetrics {
  int samples = 0;
  int correct_samples = 0;
  double per_sample_correctness = 0;
  int workloads = 0;
  int solved = 0;
  double geomean_speedup = 1;
  std::map<std::string, double> fast_p;  // "0", "1", "1.5", "2" at the full budget
  double significantly_faster = 0;
  std::map<int, std::map<std::string, double>> fast_p_at;     // N -> p -> value
  std::map<std::string, int> failures;                        // status (or "slower") -> count
  std::map<std::string, std::optional<double>> best_speedup;  // workload -> best correct speedup
  std::vector<std::pair<int, double>> correctness_by_round;   // (round, fraction correct)
  int prompt_tokens = 0;
  int completion_tokens = 0;
  double llm_seconds = 0;
};

// The samples one machine evaluated (AgentSample::machine), over every method.
struct MachineShare {
  int evaluated = 0;
  int correct = 0;
  std::set<std::string> workloads;
};

struct AgentMetrics {
  std::map<std::string, MethodMetrics> methods;  // by AgentSample::method
  MethodMetrics overall;
  std::map<std::string, MachineShare> machines;  // by AgentSample::machine; evaluated samples only
  // Each workload's machines: speedups are measured where they were evaluated, so a report over a
  // sweep whose nodes differ says which machine stands behind each workload's numbers.
  std::map<std::string, std::set<std::string>> machines_of_workload;
};

struct FastPThreshold {
  const char* key;  // the JSON key: "0", "1", "1.5", "2"
  double p;
};
inline constexpr std::array<FastPThreshold, 4> kFastPThresholds{
    {{"0", 0.0}, {"1", 1.0}, {"1.5", 1.5}, {"2", 2.0}}};

// Sample budgets at which fast_p@N is reported: powers of two, and 144 (the paper's largest
// budget).
inline constexpr std::array<int, 8> kFastPBudgets{1, 2, 4, 8, 16, 32, 64, 144};

// The failure kinds every report lists, in this order, even when none occurred.
inline constexpr std::array<const char*, 8> kFailureKinds{
    "compile_error", "runtime_error", "incorrect", "timeout",
    "rejected",      "no_code",       "llm_error", "slower"};

AgentMetrics compute_metrics(const std::vector<AgentSample>& samples);

// fast_p of `metrics` at any threshold p >= 0 (the fast_p curve), from its solved count and best
// speedups: fast_p_at_threshold(m, 1.0) == m.fast_p.at("1").
double fast_p_at_threshold(const MethodMetrics& metrics, double p);

}  // namespace kbench::agents
