#include "agents/loop_feedback.h"

#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "core/number_format.h"

namespace kbench::agents {
namespace {

using nlohmann::json;

constexpr std::size_t kQuotedLines = 4;    // per loop: enough to recognise it
constexpr std::size_t kQuotedWidth = 120;  // per line

std::vector<std::string> source_lines(const std::string& code) {
  std::vector<std::string> lines;
  std::istringstream in(code);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trimmed(const std::string& line) {
  const std::size_t begin = line.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const std::string text = line.substr(begin, line.find_last_not_of(" \t\r") + 1 - begin);
  return text.size() <= kQuotedWidth ? text : text.substr(0, kQuotedWidth) + " ...";
}

double number_or(const json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string string_or(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// The loop's line numbers in the sample's own file, sorted.
std::vector<int> own_lines(const json& loop) {
  std::vector<int> lines;
  if (const auto own = loop.find("candidate_lines"); own != loop.end() && own->is_array())
    for (const json& number : *own)
      if (number.is_number_integer()) lines.push_back(number.get<int>());
  return lines;
}

// "lines 40-44, 52" of the sample's own file, or the lines text (other files) where it has none.
std::string lines_named(const json& loop) {
  const std::vector<int> own = own_lines(loop);
  if (own.empty()) {
    const std::string lines = string_or(loop, "lines");
    return lines.empty() ? "no source line" : lines;
  }
  return std::string(own.size() == 1 ? "line " : "lines ").append(analysis::line_ranges(own, ", "));
}

void describe_loop(std::ostringstream& s, std::size_t rank, const json& loop,
                   const std::vector<std::string>& code) {
  s << rank << ". ";
  if (const auto share = loop.find("share"); share != loop.end() && share->is_number())
    s << fixed(100 * share->get<double>(), 1) << "% of the loops' cycles: ";
  s << "in " << analysis::short_function_name(string_or(loop, "function")) << ", "
    << lines_named(loop) << "; ";
  const int bits = static_cast<int>(number_or(loop, "vector_bits", 0));
  s << (bits > 0 ? std::to_string(bits) + "-bit vectors" : std::string("scalar"));
  if (const auto trips = loop.find("trips"); trips != loop.end() && trips->is_number_integer())
    s << ", " << trips->get<long long>() << " iterations per call";
  s << ", " << fixed(number_or(loop, "cycles_per_iter", 0), 2)
    << " cycles per iteration where its ports alone allow "
    << fixed(number_or(loop, "block_rthroughput", 0), 2) << "; bound by "
    << string_or(loop, "bound") << ".\n";
  {
    std::size_t quoted = 0;
    for (const int line : own_lines(loop)) {
      if (line < 1 || static_cast<std::size_t>(line) > code.size()) continue;
      const std::string text = trimmed(code[static_cast<std::size_t>(line) - 1]);
      if (text.empty()) continue;
      if (quoted++ == kQuotedLines) {
        s << "   ...\n";
        break;
      }
      s << "   " << line << ": " << text << "\n";
    }
  }
  if (const auto warnings = loop.find("warnings"); warnings != loop.end() && warnings->is_array())
    for (const json& w : *warnings)
      if (w.is_string()) s << "   Warning: " << w.get<std::string>() << "\n";
}

}  // namespace

std::string loop_feedback(const std::string& analysis_json, const std::string& code,
                          std::size_t top) {
  if (analysis_json.empty()) return "";
  const json a = json::parse(analysis_json, nullptr, false);
  if (a.is_discarded() || !a.is_object()) return "";
  std::ostringstream s;
  if (const std::string error = string_or(a, "error"); !error.empty() && !a.contains("loops")) {
    s << "No loop analysis: " << error.substr(0, error.find('\n')) << "\n";
    return s.str();
  }
  s << "Where its time goes, read off its machine code (llvm-mca, model " << string_or(a, "model");
  if (const double clock = number_or(a, "clock_ghz", 0); clock > 0)
    s << " at " << fixed(clock, 2) << " GHz";
  s << "; iterations counted over one call on one thread";
  if (const std::string size = string_or(a, "trips_size"); !size.empty())
    s << " at " << size << " size";
  s << "):\n";
  const double predicted = number_or(a, "predicted_ms", 0);
  const double measured = number_or(a, "measured_ms", 0);
  if (predicted > 0 && measured > 0)
    s << "Its innermost loops account for " << significant(predicted, 3) << " ms of the "
      << significant(measured, 3) << " ms one call took on one thread ("
      << fixed(100 * predicted / measured, 0)
      << "%); the model does not see memory traffic or the code between loops.\n";
  if (const std::string why = string_or(a, "trips_error"); !why.empty())
    s << "Iterations not counted: " << why.substr(0, why.find('\n')) << "\n";
  const auto loops = a.find("loops");
  if (loops == a.end() || !loops->is_array() || loops->empty()) {
    s << "No innermost loop was found.\n";
    return s.str();
  }
  s << (a.contains("trips_size") && a["trips_size"].is_string()
            ? "Its hottest innermost loops:\n"
            : "Its innermost loops, in the order of the code (their iterations were not "
              "counted):\n");
  const std::vector<std::string> lines = source_lines(code);
  for (std::size_t i = 0; i < loops->size() && i < top; ++i) {
    const json& loop = (*loops)[i];
    // A loop that takes almost none of the counted cycles is not where the next round's work is.
    if (i > 0 && number_or(loop, "share", 1) < 0.01) break;
    describe_loop(s, i + 1, loop, lines);
  }
  return s.str();
}

}  // namespace kbench::agents
