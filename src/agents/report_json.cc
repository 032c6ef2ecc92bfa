// Agent metrics as JSON: the summary `kbench agent --json` and `kbench agent report --format json`
// write.
#include "agents/report.h"

namespace kbench::agents {
namespace {

// Optional numbers become null, not absent, so every workload of the method is listed.
nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json method_metrics_json(const MethodMetrics& m) {
  nlohmann::json fast_p_at = nlohmann::json::object();
  for (const auto& [budget, values] : m.fast_p_at) fast_p_at[std::to_string(budget)] = values;
  nlohmann::json best = nlohmann::json::object();
  for (const auto& [workload, speedup] : m.best_speedup) best[workload] = optional_number(speedup);
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& [round, fraction] : m.correctness_by_round)
    rounds.push_back(nlohmann::json::array({round, fraction}));
  return {{"samples", m.samples},
          {"correct_samples", m.correct_samples},
          {"per_sample_correctness", m.per_sample_correctness},
          {"workloads", m.workloads},
          {"solved", m.solved},
          {"geomean_speedup", m.geomean_speedup},
          {"fast_p", m.fast_p},
          {"significantly_faster", m.significantly_faster},
          {"fast_p_at", fast_p_at},
          {"failures", m.failures},
          {"best_speedup", best},
          {"correctness_by_round", rounds},
          {"prompt_tokens", m.prompt_tokens},
          {"completion_tokens", m.completion_tokens},
          {"llm_seconds", m.llm_seconds}};
}

nlohmann::json metrics_json(const AgentMetrics& metrics) {
  nlohmann::json methods = nlohmann::json::object();
  for (const auto& [method, m] : metrics.methods) methods[method] = method_metrics_json(m);
  nlohmann::json machines = nlohmann::json::object();
  for (const auto& [machine, share] : metrics.machines)
    machines[machine] = {
        {"evaluated", share.evaluated}, {"correct", share.correct}, {"workloads", share.workloads}};
  return {{"methods", methods},
          {"overall", method_metrics_json(metrics.overall)},
          {"machines", machines},
          {"machines_of_workload", metrics.machines_of_workload}};
}

}  // namespace kbench::agents
