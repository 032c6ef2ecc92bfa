// The tables and number formats shared by the agents' Markdown and HTML reports.
#include "agents/report_format.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string_view>

namespace kbench::agents::report {
namespace {

// The value under `key`, or a zero value when missing (a failure kind another method had).
template <typename Map>
typename Map::mapped_type value_or_zero(const Map& map, const typename Map::key_type& key) {
  const auto it = map.find(key);
  return it == map.end() ? typename Map::mapped_type{} : it->second;
}

// kFailureKinds, then any other failure status of any method, alphabetically.
std::vector<std::string> failure_columns(const AgentMetrics& metrics) {
  std::vector<std::string> columns(kFailureKinds.begin(), kFailureKinds.end());
  std::set<std::string> others;
  for (const auto& [kind, count] : metrics.overall.failures)
    if (std::find(columns.begin(), columns.end(), kind) == columns.end()) others.insert(kind);
  columns.insert(columns.end(), others.begin(), others.end());
  return columns;
}

// One row per method and the overall row last.
template <typename CellsOf>
void add_method_rows(Table& table, const AgentMetrics& metrics, CellsOf cells_of) {
  for (const auto& method : methods(metrics))
    table.rows.push_back({cells_of(method, metrics.methods.at(method)), false});
  table.rows.push_back({cells_of("overall", metrics.overall), true});
}

std::vector<std::string> fast_p_columns(std::vector<std::string> leading) {
  for (const auto& t : kFastPThresholds) leading.push_back(std::string("fast_") + t.key);
  return leading;
}

Table summary_table(const AgentMetrics& metrics) {
  Table table{
      .title = "Methods",
      .note =
          "correct %: per-sample correctness. solved: workloads with a correct sample. "
          "geomean speedup: over the workloads, of each one's best correct speedup floored at "
          "1x (an unsolved workload counts 1x). fast_p: the share of workloads whose best "
          "correct sample is more than p times faster than the baseline (fast_0: correct). "
          "faster (CI): the share of workloads with a correct sample whose own 95% CI lies above "
          "1; fast_1 takes the best of noisy point estimates and counts a kernel that only "
          "matches the baseline once it has a few samples.",
      .columns = fast_p_columns({"method", "samples", "correct %", "solved", "geomean speedup"})};
  table.columns.push_back("faster (CI)");
  add_method_rows(table, metrics, [](const std::string& name, const MethodMetrics& m) {
    std::vector<std::string> cells{
        name, std::to_string(m.samples), percent(m.per_sample_correctness),
        std::to_string(m.solved) + "/" + std::to_string(m.workloads), speedup(m.geomean_speedup)};
    for (const auto& t : kFastPThresholds) cells.push_back(percent(value_or_zero(m.fast_p, t.key)));
    cells.push_back(percent(m.significantly_faster));
    return cells;
  });
  return table;
}

Table fast_p_at_table(const AgentMetrics& metrics) {
  Table table{.title = "fast_p@N",
              .note = "fast_p from the first N samples of each workload's budget only.",
              .columns = fast_p_columns({"method", "N"})};
  auto add = [&](const std::string& name, const MethodMetrics& m, bool overall) {
    for (const auto& [budget, values] : m.fast_p_at) {
      std::vector<std::string> cells{name, std::to_string(budget)};
      for (const auto& t : kFastPThresholds) cells.push_back(percent(value_or_zero(values, t.key)));
      table.rows.push_back({cells, overall});
    }
  };
  for (const auto& method : methods(metrics)) add(method, metrics.methods.at(method), false);
  add("overall", metrics.overall, true);
  return table;
}

Table failure_table(const AgentMetrics& metrics) {
  const auto kinds = failure_columns(metrics);
  Table table{.title = "Failures",
              .note = "Samples by status; slower: correct but not faster than the baseline.",
              .columns = {"method"}};
  table.columns.insert(table.columns.end(), kinds.begin(), kinds.end());
  add_method_rows(table, metrics, [&](const std::string& name, const MethodMetrics& m) {
    std::vector<std::string> cells{name};
    for (const auto& kind : kinds) cells.push_back(std::to_string(value_or_zero(m.failures, kind)));
    return cells;
  });
  return table;
}

Table best_speedup_table(const AgentMetrics& metrics) {
  Table table{.title = "Best speedup per workload",
              .note = "-: sampled, but no correct sample with a timing; blank: not sampled.",
              .columns = {"workload"}};
  const auto names = methods(metrics);
  table.columns.insert(table.columns.end(), names.begin(), names.end());
  table.columns.push_back("overall");
  // One machine is named once, in the machine table; several are named per workload.
  const bool several_machines = metrics.machines.size() > 1;
  if (several_machines) table.columns.push_back("machines");
  auto cell = [](const MethodMetrics& m, const std::string& workload) {
    const auto it = m.best_speedup.find(workload);
    return it == m.best_speedup.end() ? std::string() : speedup(it->second);
  };
  for (const auto& workload : workloads(metrics)) {
    std::vector<std::string> cells{workload};
    for (const auto& method : names) cells.push_back(cell(metrics.methods.at(method), workload));
    cells.push_back(cell(metrics.overall, workload));
    if (several_machines) {
      std::string listed;
      if (const auto it = metrics.machines_of_workload.find(workload);
          it != metrics.machines_of_workload.end())
        for (const std::string& machine : it->second)
          listed += (listed.empty() ? "" : ", ") + machine;
      cells.push_back(listed);
    }
    table.rows.push_back({cells, false});
  }
  return table;
}

Table machine_table(const AgentMetrics& metrics) {
  Table table{.title = "Machines",
              .note =
                  "The machine (host, CPU model) that evaluated each sample, as recorded with "
                  "its result. A speedup is measured on the machine that evaluated it: where "
                  "a sweep's nodes differ, compare a workload's numbers within one machine.",
              .columns = {"machine", "evaluated samples", "correct", "workloads"}};
  for (const auto& [machine, share] : metrics.machines)
    table.rows.push_back({{machine, std::to_string(share.evaluated), std::to_string(share.correct),
                           std::to_string(share.workloads.size())},
                          false});
  return table;
}

Table cost_table(const AgentMetrics& metrics) {
  Table table{.title = "LLM cost",
              .note = "",
              .columns = {"method", "prompt tokens", "completion tokens", "LLM seconds"}};
  add_method_rows(table, metrics, [](const std::string& name, const MethodMetrics& m) {
    return std::vector<std::string>{name, std::to_string(m.prompt_tokens),
                                    std::to_string(m.completion_tokens), fixed(m.llm_seconds, 1)};
  });
  return table;
}

}  // namespace

std::string percent(double fraction) {
  return fixed(100 * fraction, 1) + "%";
}

std::string speedup(const std::optional<double>& value) {
  return value ? fixed(*value, 2) + "x" : "-";
}

std::vector<std::string> methods(const AgentMetrics& metrics) {
  static constexpr std::string_view kPaperOrder[] = {"best-of-n", "iterative", "iterative-context",
                                                     "beam"};
  std::vector<std::string> names;
  for (std::string_view known : kPaperOrder)
    if (metrics.methods.contains(std::string(known))) names.emplace_back(known);
  for (const auto& [method, m] : metrics.methods)
    if (std::find(names.begin(), names.end(), method) == names.end()) names.push_back(method);
  return names;
}

std::vector<std::string> workloads(const AgentMetrics& metrics) {
  std::set<std::string> names;
  for (const auto& [workload, best] : metrics.overall.best_speedup) names.insert(workload);
  for (const auto& [method, m] : metrics.methods)
    for (const auto& [workload, best] : m.best_speedup) names.insert(workload);
  return {names.begin(), names.end()};
}

std::vector<Table> tables(const AgentMetrics& metrics) {
  std::vector<Table> all = {summary_table(metrics), fast_p_at_table(metrics),
                            failure_table(metrics), best_speedup_table(metrics)};
  if (!metrics.machines.empty()) all.push_back(machine_table(metrics));
  all.push_back(cost_table(metrics));
  return all;
}

}  // namespace kbench::agents::report
