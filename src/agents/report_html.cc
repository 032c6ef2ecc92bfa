// Agent metrics as one self-contained HTML page: inline SVG charts drawn here (no scripts, no
// external resources, so the page opens offline and in a headless browser) and the report's tables.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string_view>

#include "agents/report.h"
#include "agents/report_format.h"

namespace kbench::agents {
namespace {

std::string escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Coordinates with one decimal: enough for a screen, and the page stays small.
std::string px(double value) {
  return fixed(value, 1);
}

// Distinguishable on white and in greyscale print (Tableau 10's first eight).
constexpr std::string_view kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                         "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};
std::string_view color(std::size_t method_index) {
  return kPalette[method_index % std::size(kPalette)];
}

// The plot area of a chart inside its SVG: margins leave room for axis labels and the legend.
struct Frame {
  double left = 60, top = 20, width = 640, height = 300;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

void open_svg(std::ostream& out, std::string_view id, std::string_view label, double width,
              double height) {
  out << "<svg id=\"" << id << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(width)
      << "\" height=\"" << px(height) << "\" viewBox=\"0 0 " << px(width) << " " << px(height)
      << "\" role=\"img\" aria-label=\"" << escaped(label) << "\">\n";
}

void text(std::ostream& out, double x, double y, std::string_view anchor, std::string_view content,
          std::string_view extra = "") {
  out << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\" text-anchor=\"" << anchor << "\""
      << extra << ">" << escaped(content) << "</text>\n";
}

void line(std::ostream& out, double x1, double y1, double x2, double y2, std::string_view cls) {
  out << "<line class=\"" << cls << "\" x1=\"" << px(x1) << "\" y1=\"" << px(y1) << "\" x2=\""
      << px(x2) << "\" y2=\"" << px(y2) << "\"/>\n";
}

// A legend row above the plot area: a swatch and the name of each method.
void legend(std::ostream& out, const std::vector<std::string>& methods, const Frame& frame) {
  double x = frame.left;
  for (std::size_t i = 0; i < methods.size(); ++i) {
    out << "<rect class=\"legend-swatch\" x=\"" << px(x) << "\" y=\"4\" width=\"12\" height=\"12\""
        << " fill=\"" << color(i) << "\"/>\n";
    text(out, x + 16, 14, "start", methods[i]);
    x += 16 + 8.0 * static_cast<double>(methods[i].size()) + 24;
  }
}

// A y axis for fractions 0..1 with ticks every 25%.
void fraction_axis(std::ostream& out, const Frame& frame) {
  for (int i = 0; i <= 4; ++i) {
    const double y = frame.bottom() - frame.height * i / 4.0;
    line(out, frame.left, y, frame.right(), y, "grid");
    text(out, frame.left - 6, y + 4, "end", std::to_string(i * 25) + "%");
  }
}

// The fast_p and rounds charts both plot fractions of samples, so they share frame, legend and
// y axis; the caller draws the x axis and the curves, then closes the SVG.
Frame open_fraction_chart(std::ostream& out, std::string_view id, std::string_view label,
                          const std::vector<std::string>& methods) {
  const Frame frame{.left = 60, .top = 30, .width = 640, .height = 300};
  open_svg(out, id, label, frame.right() + 20, frame.bottom() + 50);
  legend(out, methods, frame);
  fraction_axis(out, frame);
  return frame;
}

// (a) Best speedup per workload and method, one group of bars per workload, on a log2 scale: a bar
// rises from the 1x line when the agent beat the baseline and hangs below it when it did not.
void speedup_chart(std::ostream& out, const AgentMetrics& metrics) {
  const auto methods = report::methods(metrics);
  const auto workloads = report::workloads(metrics);
  double lo = 1, hi = 1;
  for (const auto& [method, m] : metrics.methods)
    for (const auto& [workload, best] : m.best_speedup)
      if (best) {
        lo = std::min(lo, *best);
        hi = std::max(hi, *best);
      }
  // Whole powers of two at both ends, at least 0.5x..2x, so the 1x line never sits on an edge.
  const int lo_exp = std::min(-1, static_cast<int>(std::floor(std::log2(lo))));
  const int hi_exp = std::max(1, static_cast<int>(std::ceil(std::log2(hi))));
  const int tick_step = std::max(1, (hi_exp - lo_exp + 7) / 8);

  constexpr double kBar = 14, kGroupGap = 22;
  const double group = kBar * static_cast<double>(std::max<std::size_t>(1, methods.size()));
  Frame frame{.left = 60, .top = 30, .width = 0, .height = 300};
  frame.width = std::max(480.0, static_cast<double>(workloads.size()) * (group + kGroupGap));
  // Room below the plot for the workload names, rotated by 40 degrees: about 7 px a character
  // times sin(40).
  std::size_t longest = 0;
  for (const auto& workload : workloads) longest = std::max(longest, workload.size());
  const double label_room = std::min(240.0, 30 + 4.5 * static_cast<double>(longest));
  open_svg(out, "speedup-chart", "best speedup per workload and method", frame.right() + 20,
           frame.bottom() + label_room);
  legend(out, methods, frame);
  auto y_of = [&](double speedup) {
    return frame.top + frame.height * (hi_exp - std::log2(speedup)) / (hi_exp - lo_exp);
  };
  for (int e = lo_exp; e <= hi_exp; e += tick_step) {
    const double y = y_of(std::exp2(e));
    line(out, frame.left, y, frame.right(), y, "grid");
    text(out, frame.left - 6, y + 4, "end", fixed(std::exp2(e), e < 0 ? -e : 0) + "x");
  }
  const double one = y_of(1);
  line(out, frame.left, one, frame.right(), one, "baseline-line");
  for (std::size_t w = 0; w < workloads.size(); ++w) {
    const double x0 = frame.left + kGroupGap / 2 + static_cast<double>(w) * (group + kGroupGap);
    for (std::size_t i = 0; i < methods.size(); ++i) {
      const auto& best_speedup = metrics.methods.at(methods[i]).best_speedup;
      const auto it = best_speedup.find(workloads[w]);
      const double x = x0 + kBar * static_cast<double>(i);
      if (it == best_speedup.end()) continue;  // the method did not sample this workload
      if (!it->second) {
        // Sampled but no correct timed sample: a cross on the 1x line, so it reads as "tried".
        text(out, x + kBar / 2, one + 4, "middle", "\u00d7",
             " class=\"no-speedup\" fill=\"" + std::string(color(i)) + "\"");
        continue;
      }
      const double y = y_of(*it->second);
      // At least a pixel, so a 1.00x bar is visible.
      const double height = std::max(1.0, std::abs(one - y));
      out << "<rect class=\"bar\" data-method=\"" << escaped(methods[i]) << "\" data-workload=\""
          << escaped(workloads[w]) << "\" x=\"" << px(x) << "\" y=\"" << px(std::min(one, y))
          << "\" width=\"" << px(kBar - 2) << "\" height=\"" << px(height) << "\" fill=\""
          << color(i) << "\"><title>" << escaped(methods[i] + " on " + workloads[w] + ": ")
          << report::speedup(it->second) << "</title></rect>\n";
    }
    const double label_x = x0 + group / 2, label_y = frame.bottom() + 14;
    text(out, label_x, label_y, "end", workloads[w],
         " class=\"workload-label\" transform=\"rotate(-40 " + px(label_x) + " " + px(label_y) +
             ")\"");
  }
  out << "</svg>\n";
}

// (b) fast_p against p for each method. fast_p is a step function of p that drops at each
// workload's best speedup, so the curve is drawn exactly from those breakpoints rather than sampled
// on a grid (a grid would round the drops off); the points mark p = 0, 1, 1.5 and 2, the
// thresholds of the tables.
void fast_p_chart(std::ostream& out, const AgentMetrics& metrics) {
  const auto methods = report::methods(metrics);
  double largest = 0;
  for (const auto& [method, m] : metrics.methods)
    for (const auto& [workload, best] : m.best_speedup)
      if (best) largest = std::max(largest, *best);
  const double p_max = std::max(2.5, std::ceil(largest * 1.1 * 2) / 2);  // a whole half, past all
  const Frame frame =
      open_fraction_chart(out, "fastp-chart", "fast_p against p for each method", methods);
  auto x_of = [&](double p) { return frame.left + frame.width * p / p_max; };
  auto y_of = [&](double fraction) { return frame.bottom() - frame.height * fraction; };
  const double p_step = p_max <= 5 ? 0.5 : std::ceil(p_max / 10);
  for (double p = 0; p <= p_max + 1e-9; p += p_step)
    text(out, x_of(p), frame.bottom() + 16, "middle", fixed(p, p_step < 1 ? 1 : 0));
  text(out, frame.left + frame.width / 2, frame.bottom() + 36, "middle",
       "p (speedup over the baseline)");
  for (const auto& t : kFastPThresholds)
    if (t.p > 0) line(out, x_of(t.p), frame.top, x_of(t.p), frame.bottom(), "threshold-line");
  for (std::size_t i = 0; i < methods.size(); ++i) {
    const MethodMetrics& m = metrics.methods.at(methods[i]);
    std::vector<double> drops;
    for (const auto& [workload, best] : m.best_speedup)
      if (best && *best < p_max) drops.push_back(*best);
    std::sort(drops.begin(), drops.end());
    drops.erase(std::unique(drops.begin(), drops.end()), drops.end());
    // fast_p counts best > p: at p = drop the value has already fallen.
    std::ostringstream points;
    auto point = [&](double p, double fraction) {
      points << px(x_of(p)) << "," << px(y_of(fraction)) << " ";
    };
    point(0, fast_p_at_threshold(m, 0));
    double before = fast_p_at_threshold(m, 1e-12);  // timed workloads only, just above 0
    point(0, before);
    for (double drop : drops) {
      point(drop, before);
      before = fast_p_at_threshold(m, drop);
      point(drop, before);
    }
    point(p_max, before);
    out << "<polyline class=\"fastp-curve\" data-method=\"" << escaped(methods[i])
        << "\" fill=\"none\" stroke=\"" << color(i) << "\" stroke-width=\"2\" points=\""
        << points.str() << "\"/>\n";
    for (const auto& t : kFastPThresholds) {
      const auto it = m.fast_p.find(t.key);
      const double value = it == m.fast_p.end() ? 0 : it->second;
      out << "<circle class=\"fastp-point\" data-method=\"" << escaped(methods[i]) << "\" cx=\""
          << px(x_of(t.p)) << "\" cy=\"" << px(y_of(value)) << "\" r=\"4\" fill=\"" << color(i)
          << "\"><title>" << escaped(methods[i]) << ": fast_" << t.key << " = "
          << report::percent(value) << "</title></circle>\n";
    }
  }
  out << "</svg>\n";
}

// (c) The share of each round's samples that were correct, one line per method.
void rounds_chart(std::ostream& out, const AgentMetrics& metrics) {
  const auto methods = report::methods(metrics);
  int first = 0, last = 0;
  bool any = false;
  for (const auto& [method, m] : metrics.methods)
    for (const auto& [round, fraction] : m.correctness_by_round) {
      first = any ? std::min(first, round) : round;
      last = any ? std::max(last, round) : round;
      any = true;
    }
  if (last == first) ++last;  // one round still gets an axis with a width
  const Frame frame =
      open_fraction_chart(out, "rounds-chart", "correctness per round for each method", methods);
  auto x_of = [&](int round) {
    return frame.left + frame.width * (round - first) / static_cast<double>(last - first);
  };
  auto y_of = [&](double fraction) { return frame.bottom() - frame.height * fraction; };
  const int round_step = std::max(1, (last - first + 9) / 10);
  for (int round = first; round <= last; round += round_step)
    text(out, x_of(round), frame.bottom() + 16, "middle", std::to_string(round));
  text(out, frame.left + frame.width / 2, frame.bottom() + 36, "middle", "round");
  for (std::size_t i = 0; i < methods.size(); ++i) {
    const MethodMetrics& m = metrics.methods.at(methods[i]);
    std::ostringstream points;
    for (const auto& [round, fraction] : m.correctness_by_round)
      points << px(x_of(round)) << "," << px(y_of(fraction)) << " ";
    out << "<polyline class=\"rounds-line\" data-method=\"" << escaped(methods[i])
        << "\" fill=\"none\" stroke=\"" << color(i) << "\" stroke-width=\"2\" points=\""
        << points.str() << "\"/>\n";
    for (const auto& [round, fraction] : m.correctness_by_round)
      out << "<circle class=\"round-point\" data-method=\"" << escaped(methods[i]) << "\" cx=\""
          << px(x_of(round)) << "\" cy=\"" << px(y_of(fraction)) << "\" r=\"4\" fill=\"" << color(i)
          << "\"><title>" << escaped(methods[i]) << ", round " << round << ": "
          << report::percent(fraction) << " correct</title></circle>\n";
  }
  out << "</svg>\n";
}

void table(std::ostream& out, const report::Table& t) {
  out << "<h2>" << escaped(t.title) << "</h2>\n<table>\n<thead><tr>";
  for (const auto& column : t.columns) out << "<th>" << escaped(column) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out << (row.overall ? "<tr class=\"overall\">" : "<tr>");
    for (const auto& cell : row.cells) out << "<td>" << escaped(cell) << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
  if (!t.note.empty()) out << "<p class=\"note\">" << escaped(t.note) << "</p>\n";
}

constexpr std::string_view kStyle = R"(body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.overall { font-weight: bold; background: #f3f3f3; }
p.note { color: #555; max-width: 60em; }
.chart { overflow-x: auto; }
svg text { font-size: 12px; fill: #222; }
svg .grid { stroke: #e4e4e4; }
svg .baseline-line { stroke: #222; stroke-dasharray: 6 3; }
svg .threshold-line { stroke: #bbb; stroke-dasharray: 3 3; }
)";

}  // namespace

std::string metrics_html(const AgentMetrics& metrics) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<title>kbench agent report</title>\n<style>\n"
      << kStyle << "</style>\n</head>\n<body>\n<h1>Agent report</h1>\n";
  if (metrics.overall.samples == 0) {
    out << "<p>No agent samples.</p>\n</body>\n</html>\n";
    return out.str();
  }
  const auto tables = report::tables(metrics);
  table(out, tables.front());
  out << "<h2>Best speedup per workload and method</h2>\n<div class=\"chart\">\n";
  speedup_chart(out, metrics);
  out << "</div>\n<p class=\"note\">Log scale; the dashed line is the baseline (1x). A cross: "
         "sampled, but no correct sample with a timing.</p>\n";
  out << "<h2>fast_p against p</h2>\n<div class=\"chart\">\n";
  fast_p_chart(out, metrics);
  out << "</div>\n<h2>Correctness per round</h2>\n<div class=\"chart\">\n";
  rounds_chart(out, metrics);
  out << "</div>\n";
  for (std::size_t i = 1; i < tables.size(); ++i) table(out, tables[i]);
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace kbench::agents
