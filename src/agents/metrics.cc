// The agents' aggregate metrics (definitions in metrics.h).
#include "agents/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace kbench::agents {
namespace {

bool is_correct(const AgentSample& sample) {
  return sample.status == "correct";
}

// A speedup that is not a finite number > 0 is a measurement that did not happen: it must neither
// win "best" nor reach the geomean's logarithm.
std::optional<double> usable_speedup(const AgentSample& sample) {
  if (!sample.speedup || !std::isfinite(*sample.speedup) || *sample.speedup <= 0)
    return std::nullopt;
  return sample.speedup;
}

struct WorkloadOutcome {
  bool solved = false;
  std::optional<double> best;   // over correct samples with a usable speedup
  bool claimed_faster = false;  // a correct sample's verdict says so
};

// Each workload of `samples` (all of them, so that one with no sample below `index_limit` still
// counts, unsolved) and what its samples with index < index_limit reached.
std::map<std::string, WorkloadOutcome> outcomes(const std::vector<const AgentSample*>& samples,
                                                int index_limit) {
  std::map<std::string, WorkloadOutcome> by_workload;
  for (const AgentSample* sample : samples) {
    WorkloadOutcome& outcome = by_workload[sample->workload];
    if (sample->index >= index_limit || !is_correct(*sample)) continue;
    outcome.solved = true;
    if (sample->speedup_verdict == "faster") outcome.claimed_faster = true;
    if (const auto speedup = usable_speedup(*sample))
      outcome.best = outcome.best ? std::max(*outcome.best, *speedup) : *speedup;
  }
  return by_workload;
}

double fast_p_of(const std::map<std::string, WorkloadOutcome>& by_workload, double p) {
  if (by_workload.empty()) return 0;
  std::size_t fast = 0;
  for (const auto& [workload, outcome] : by_workload)
    if (outcome.solved && (p <= 0 || (outcome.best && *outcome.best > p))) ++fast;
  return static_cast<double>(fast) / static_cast<double>(by_workload.size());
}

std::map<std::string, double> fast_p_map(const std::map<std::string, WorkloadOutcome>& outcomes) {
  std::map<std::string, double> values;
  for (const auto& threshold : kFastPThresholds)
    values[threshold.key] = fast_p_of(outcomes, threshold.p);
  return values;
}

MethodMetrics metrics_of(const std::vector<const AgentSample*>& samples) {
  MethodMetrics m;
  for (const char* kind : kFailureKinds) m.failures[kind] = 0;
  std::map<int, std::pair<int, int>> rounds;  // round -> (correct, samples)
  // The budget is per method: overall, a workload that four methods sampled 8 times each still had
  // a budget of 8, so counts are kept per (method, workload).
  std::map<std::pair<std::string, std::string>, int> per_budget;
  for (const AgentSample* sample : samples) {
    ++m.samples;
    auto& [round_correct, round_samples] = rounds[sample->round];
    ++round_samples;
    ++per_budget[{sample->method, sample->workload}];
    m.prompt_tokens += sample->prompt_tokens;
    m.completion_tokens += sample->completion_tokens;
    m.llm_seconds += sample->latency_s;
    if (is_correct(*sample)) {
      ++m.correct_samples;
      ++round_correct;
      const auto speedup = usable_speedup(*sample);
      if (!speedup || *speedup <= 1) ++m.failures["slower"];
    } else {
      ++m.failures[sample->status];
    }
  }
  if (m.samples > 0) m.per_sample_correctness = static_cast<double>(m.correct_samples) / m.samples;
  for (const auto& [round, counts] : rounds)
    m.correctness_by_round.emplace_back(round, static_cast<double>(counts.first) / counts.second);

  const auto full = outcomes(samples, std::numeric_limits<int>::max());
  m.workloads = static_cast<int>(full.size());
  double log_sum = 0;
  int claimed_faster = 0;
  for (const auto& [workload, outcome] : full) {
    if (outcome.solved) ++m.solved;
    if (outcome.claimed_faster) ++claimed_faster;
    m.best_speedup[workload] = outcome.best;
    if (outcome.best) log_sum += std::log(std::max(1.0, *outcome.best));
  }
  m.geomean_speedup = full.empty() ? 1.0 : std::exp(log_sum / static_cast<double>(full.size()));
  m.fast_p = fast_p_map(full);
  if (!full.empty())
    m.significantly_faster = static_cast<double>(claimed_faster) / static_cast<double>(full.size());

  int largest_budget = 0;
  for (const auto& [key, count] : per_budget) largest_budget = std::max(largest_budget, count);
  for (int budget : kFastPBudgets)
    if (budget <= largest_budget) m.fast_p_at[budget] = fast_p_map(outcomes(samples, budget));
  return m;
}

}  // namespace

AgentMetrics compute_metrics(const std::vector<AgentSample>& samples) {
  std::map<std::string, std::vector<const AgentSample*>> by_method;
  std::vector<const AgentSample*> all;
  all.reserve(samples.size());
  for (const AgentSample& sample : samples) {
    by_method[sample.method].push_back(&sample);
    all.push_back(&sample);
  }
  AgentMetrics metrics;
  for (const auto& [method, method_samples] : by_method)
    metrics.methods[method] = metrics_of(method_samples);
  metrics.overall = metrics_of(all);
  for (const AgentSample& sample : samples) {
    if (sample.machine.empty()) continue;
    MachineShare& share = metrics.machines[sample.machine];
    ++share.evaluated;
    if (is_correct(sample)) ++share.correct;
    share.workloads.insert(sample.workload);
    metrics.machines_of_workload[sample.workload].insert(sample.machine);
  }
  return metrics;
}

double fast_p_at_threshold(const MethodMetrics& metrics, double p) {
  if (metrics.workloads <= 0) return 0;
  if (p <= 0) return static_cast<double>(metrics.solved) / metrics.workloads;
  int fast = 0;
  for (const auto& [workload, best] : metrics.best_speedup)
    if (best && *best > p) ++fast;
  return static_cast<double>(fast) / metrics.workloads;
}

}  // namespace kbench::agents
