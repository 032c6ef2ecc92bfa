// Agent metrics as GitHub-flavoured Markdown: the paper-style table and its companions.
#include <cctype>
#include <sstream>
#include <string_view>

#include "agents/report.h"
#include "agents/report_format.h"

namespace kbench::agents {
namespace {

bool alphanumeric(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// Workload and method names come from the store: a '|' would split a cell and '*' or '_' could
// turn the rest of a row italic, so Markdown's punctuation is backslash-escaped. An '_' between
// letters or digits ("fast_1", "8p_GEMM") cannot emphasise anything and stays as it is.
std::string escaped(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool intraword = c == '_' && i > 0 && i + 1 < text.size() && alphanumeric(text[i - 1]) &&
                           alphanumeric(text[i + 1]);
    if (!intraword && std::string_view("\\`*_[]<>|#").find(c) != std::string_view::npos)
      out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

void write_row(std::ostream& out, const std::vector<std::string>& cells, bool bold) {
  out << "|";
  for (const auto& c : cells) out << " " << (bold ? "**" + escaped(c) + "**" : escaped(c)) << " |";
  out << "\n";
}

void write_table(std::ostream& out, const report::Table& table) {
  out << "## " << escaped(table.title) << "\n\n";
  write_row(out, table.columns, false);
  // The first column names the row (left-aligned); the others hold numbers (right-aligned).
  out << "|";
  for (std::size_t i = 0; i < table.columns.size(); ++i) out << (i == 0 ? " :-- |" : " --: |");
  out << "\n";
  for (const auto& row : table.rows) write_row(out, row.cells, row.overall);
  if (!table.note.empty()) out << "\n" << escaped(table.note) << "\n";
  out << "\n";
}

}  // namespace

std::string metrics_markdown(const AgentMetrics& metrics) {
  std::ostringstream out;
  out << "# Agent report\n\n";
  if (metrics.overall.samples == 0) {
    out << "No agent samples.\n";
    return out.str();
  }
  for (const auto& table : report::tables(metrics)) write_table(out, table);
  return out.str();
}

}  // namespace kbench::agents
