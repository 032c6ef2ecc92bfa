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

}  // namespace

int agent_report_command(const AgentReportOptions& options) {
  // The format is checked before the store is opened: a typo should not cost a database read.
  const ReportFormat format = report_format_or_usage_error(options.format);
  ResultStore store = open_store_for_reading(options.db);
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
