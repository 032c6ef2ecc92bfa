// What the Markdown and HTML reports of agent metrics share: number formats, the order of rows and
// columns, and the tables themselves as plain text, which each format escapes and lays out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agents/metrics.h"
#include "core/number_format.h"

namespace kbench::agents::report {

std::string percent(double fraction);                     // "37.5%"
std::string speedup(const std::optional<double>& value);  // "2.31x", or "-" when absent

// The methods of `metrics` in the paper's order (best-of-n, iterative, iterative-context, beam),
// then any others alphabetically: reports list them alike and a reader finds each in its place.
std::vector<std::string> methods(const AgentMetrics& metrics);

// Every workload of any method, sorted.
std::vector<std::string> workloads(const AgentMetrics& metrics);

// Cells are plain text (unescaped). The first column names the row; `overall` marks the row of all
// methods together, which a format sets apart so it does not read as one more method.
struct Table {
  std::string title;
  std::string note;  // one paragraph under the table; may be empty
  std::vector<std::string> columns;
  struct Row {
    std::vector<std::string> cells;
    bool overall = false;
  };
  std::vector<Row> rows;
};

// The paper-style summary (method | samples | correct % | solved | geomean speedup | fast_0 |
// fast_1 | fast_1.5 | fast_2 | faster (CI)), fast_p@N, the failure breakdown, best speedup per
// workload per method (with each workload's machines when the samples come from several), the
// machines that evaluated the samples and the LLM cost, in that order.
std::vector<Table> tables(const AgentMetrics& metrics);

}  // namespace kbench::agents::report
