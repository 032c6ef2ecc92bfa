// `kbench agent report`: the metrics of stored agent samples as Markdown, JSON or an HTML page.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "agents/metrics.h"
#include "agents/report.h"
#include "cli/commands.h"
#include "cli/context.h"

namespace kbench::cli {
namespace {

enum class ReportFormat { kMarkdown, kJson, kHtml };

ReportFormat report_format_or_usage_error(const std::string& text) {
  if (text == "markdown" || text == "md") return ReportFormat::kMarkdown;
  if (text == "json") return ReportFormat::kJson;
  if (text == "html") return ReportFormat::kHtml;
  throw UsageError("unknown format '" + text + "' (markdown, json or html)");
}

std::string render(const agents::AgentMetrics& metrics, ReportFormat format) {
  switch (format) {
    case ReportFormat::kMarkdown:
      return agents::metrics_markdown(metrics);
    case ReportFormat::kJson:
      return agents::metrics_json(metrics).dump(2) + "\n";
    case ReportFormat::kHtml:
      return agents::metrics_html(metrics);
  }
  throw std::logic_error("unhandled report format");
}

// Refuses a --run that names no agent run of the store: a report that says "no agent samples" for
// a typo'd id, or for a `kbench run` pass, reads as an agent that produced nothing.
void check_agent_runs(const ResultStore& store, const std::vector<std::int64_t>& run_ids) {
  for (const std::int64_t id : run_ids) {
    const std::optional<ResultStore::Run> run = store.run_by_id(id);
    if (!run) {
      throw UsageError("no run " + std::to_string(id) + " in " + store.path() +
                       " (without --run the report covers every agent run)");
    }
    if (!run->key.starts_with(kAgentRunKeyPrefix))
      throw UsageError("run " + std::to_string(id) + " is no agent run: " + run->command);
  }
}

}  // namespace

int agent_report_command(const AgentReportOptions& options) {
  // The format is checked before the store is opened: a typo should not cost a database read.
  const ReportFormat format = report_format_or_usage_error(options.format);
  ResultStore store = open_store_for_reading(options.db);
  check_agent_runs(store, options.runs);
  const std::string report =
      render(agents::compute_metrics(store.agent_samples(options.runs)), format);
  if (options.out.empty()) {
    std::cout << report << std::flush;
    return 0;
  }
  errno = 0;
  std::ofstream file(options.out, std::ios::binary | std::ios::trunc);
  if (file) file << report;
  if (!file || !file.flush())
    throw std::runtime_error("cannot write the report to '" + options.out + "'" +
                             (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
  return 0;
}

}  // namespace kbench::cli
