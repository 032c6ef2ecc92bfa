// Table, JSON and CSV renderings of EvalResult lists, and the `kbench eval` verdict block.
#include "store/sinks.h"
#include "core/number_format.h"
#include "core/text.h"
#include "harness/noise.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench {
namespace {

constexpr const char* kMissing = "-";

// Diagnostics can be a whole compiler log: the verdict shows a compiler's first lines (its first
// errors) and a crashed worker's last (its cause); what was kept of the rest stays in the store and
// the JSON.
constexpr std::size_t kVerdictDiagnosticLines = 40;
// Long enough for a template error's longest line, short enough that a binary "source" quoted by
// the compiler does not fill the screen.
constexpr std::size_t kVerdictDiagnosticLineBytes = 400;

std::string non_finite_name(double value) {
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

// `digits` significant digits without an exponent, so columns of times ranging from microseconds to
// seconds stay comparable at a glance: 0.000123, 1.235, 1235.
std::string format_sig(double value, int digits = 4) {
  if (!std::isfinite(value)) return non_finite_name(value);
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  return fixed(value, std::clamp(digits - 1 - magnitude, 0, 6));
}

// Error magnitudes span many decades, so they get an exponent.
std::string format_err(double value) {
  if (!std::isfinite(value)) return non_finite_name(value);
  char text[32];
  std::snprintf(text, sizeof text, "%.3e", value);
  return text;
}

std::string format_pct(double value) {
  return std::isfinite(value) ? fixed(value, 1) : non_finite_name(value);
}

// Shortest text that reads back as the same double, for CSV consumers that recompute.
std::string format_exact(double value) {
  return std::isfinite(value) ? exact(value) : non_finite_name(value);
}

// An empty cell for a value not measured.
std::string format_exact(const std::optional<double>& value) {
  return value ? format_exact(*value) : "";
}

std::string format_speedup(const EvalResult& result) {
  if (!result.speedup) return kMissing;
  std::string text = format_sig(*result.speedup, 3) + "x";
  if (result.speedup_ci95) {
    text += " [" + format_sig(result.speedup_ci95->first, 3) + ", " +
            format_sig(result.speedup_ci95->second, 3) + "]";
  }
  return text;
}

// A sha256 digest is shortened the way git shortens commits; other labels ("builtin:baseline") are
// already short and lose their meaning when cut.
std::string short_hash(const std::string& hash) {
  constexpr std::size_t kShown = 12;
  const bool hex_digest =
      hash.size() > 2 * kShown && hash.find_first_not_of("0123456789abcdef") == std::string::npos;
  return hex_digest ? hash.substr(0, kShown) : hash;
}

// The table's candidate column: the file's name without its directories (the full path is in
// `results --json` and the verdict), "baseline" for an A/A run or a baseline's own record.
std::string candidate_name(const EvalResult& r) {
  if (r.candidate_path.empty()) return "baseline";
  std::filesystem::path path(r.candidate_path);
  if (path.filename().empty()) path = path.parent_path();  // a directory given as "out/"
  return terminal_safe(path.filename().string());
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

void write_table(std::ostream& out, std::span<const EvalResult> results) {
  struct Column {
    const char* header;
    bool right_aligned;  // numbers line up on their last digit
    std::function<std::string(const EvalResult&)> cell;
  };
  const auto median = [](const std::optional<TimingSummary>& timing) {
    return timing ? format_sig(timing->median_ms) : std::string(kMissing);
  };
  const auto util = [](double Utilization::*field, std::string (*format)(double, int), int digits) {
    return [=](const EvalResult& r) {
      return r.utilization ? format(r.utilization.value().*field, digits) : std::string(kMissing);
    };
  };
  const auto pct = [](double Utilization::*field) {
    return [=](const EvalResult& r) {
      return r.utilization ? format_pct(r.utilization.value().*field) : std::string(kMissing);
    };
  };
  const std::vector<Column> columns = {
      {"id", true, [](const EvalResult& r) { return std::to_string(r.id); }},
      {"created_at", false, [](const EvalResult& r) { return r.created_at; }},
      {"kind", false, [](const EvalResult& r) { return r.kind; }},
      {"workload", false, [](const EvalResult& r) { return r.workload; }},
      {"size", false, [](const EvalResult& r) { return r.size; }},
      {"threads", true, [](const EvalResult& r) { return std::to_string(r.threads); }},
      {"status", false, [](const EvalResult& r) { return std::string(status_name(r.status)); }},
      {"candidate", false, candidate_name},
      {"speedup [95% CI]", false, format_speedup},
      {"cand_ms", true, [&](const EvalResult& r) { return median(r.candidate); }},
      {"base_ms", true, [&](const EvalResult& r) { return median(r.baseline); }},
      {"GFLOP/s", true, util(&Utilization::gflops, format_sig, 4)},
      {"%peak", true, pct(&Utilization::pct_peak_flops)},
      {"GB/s", true, util(&Utilization::gbps, format_sig, 4)},
      {"%bw", true, pct(&Utilization::pct_peak_bw)},
      {"%roof", true,
       [](const EvalResult& r) {
         return r.utilization && !r.utilization->bound.empty()
                    ? format_pct(r.utilization->pct_roofline)
                    : std::string(kMissing);
       }},
      {"bound", false,
       [](const EvalResult& r) {
         return r.utilization && !r.utilization->bound.empty() ? r.utilization->bound
                                                               : std::string(kMissing);
       }},
      {"unit", false,
       [](const EvalResult& r) {
         return r.utilization && !r.utilization->peak_flops_kind.empty()
                    ? r.utilization->peak_flops_kind
                    : std::string(kMissing);
       }},
      {"%lib", true,
       [](const EvalResult& r) {
         return r.utilization && r.utilization->library_ms > 0
                    ? format_pct(r.utilization->pct_library)
                    : std::string(kMissing);
       }},
      {"noise", false,
       [](const EvalResult& r) {
         return r.noise ? std::string(r.noise->stable ? "stable" : "unstable")
                        : std::string(kMissing);
       }},
  };

  std::vector<std::vector<std::string>> cells;
  cells.reserve(results.size());
  std::vector<std::size_t> widths;
  for (const Column& column : columns) widths.push_back(std::string_view(column.header).size());
  for (const EvalResult& result : results) {
    std::vector<std::string>& row = cells.emplace_back();
    for (std::size_t c = 0; c < columns.size(); ++c) {
      row.push_back(columns[c].cell(result));
      widths[c] = std::max(widths[c], row.back().size());
    }
  }

  const auto write_row = [&](const auto& text_of) {
    std::string line;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::string text = text_of(c);
      const std::string pad(widths[c] - text.size(), ' ');
      if (c > 0) line += "  ";
      line += columns[c].right_aligned ? pad + text : text + pad;
    }
    line.erase(line.find_last_not_of(' ') + 1);  // no trailing blanks after a short last column
    out << line << '\n';
  };
  write_row([&](std::size_t c) { return std::string(columns[c].header); });
  for (const auto& row : cells) write_row([&](std::size_t c) { return row[c]; });
  // A row has no room for the sentence; below the table, so no flagged result goes unseen.
  for (const EvalResult& r : results)
    if (!r.suspicious.empty())
      out << "suspicious  id " << r.id << " " << r.workload << ": " << terminal_safe(r.suspicious)
          << '\n';
}

void write_json(std::ostream& out, std::span<const EvalResult> results,
                const JsonOptions& options) {
  nlohmann::json array = nlohmann::json::array();
  for (const EvalResult& result : results) array.push_back(to_json(result, options));
  out << dump_json(array, 2) << '\n';
}

// Header and cells side by side, so a new column cannot shift the others.
struct CsvColumn {
  std::string name;
  std::function<std::string(const EvalResult&)> cell;
};

std::vector<CsvColumn> csv_columns() {
  using R = const EvalResult&;
  std::vector<CsvColumn> columns = {
      {"id", [](R r) { return std::to_string(r.id); }},
      {"created_at", [](R r) { return r.created_at; }},
      {"kind", [](R r) { return r.kind; }},
      {"workload", [](R r) { return r.workload; }},
      {"size", [](R r) { return r.size; }},
      {"threads", [](R r) { return std::to_string(r.threads); }},
      {"status", [](R r) { return std::string(status_name(r.status)); }},
      {"error", [](R r) { return r.error; }},
      {"candidate_path", [](R r) { return r.candidate_path; }},
      {"candidate_hash", [](R r) { return r.candidate_hash; }},
      {"passed", [](R r) { return std::string(r.correctness.passed ? "true" : "false"); }},
      {"trials", [](R r) { return std::to_string(r.correctness.trials); }},
      {"max_abs_err",
       [](R r) { return format_exact(r.correctness.measured(&CorrectnessReport::max_abs_err)); }},
      {"max_rel_err",
       [](R r) { return format_exact(r.correctness.measured(&CorrectnessReport::max_rel_err)); }},
      {"rel_l2_err",
       [](R r) { return format_exact(r.correctness.measured(&CorrectnessReport::rel_l2_err)); }},
      {"detail", [](R r) { return r.correctness.detail; }},
  };
  using TimingField = double TimingSummary::*;
  const std::pair<const char*, TimingField> timing_fields[] = {
      {"median_ms", &TimingSummary::median_ms},
      {"p25_ms", &TimingSummary::p25_ms},
      {"p75_ms", &TimingSummary::p75_ms},
      {"min_ms", &TimingSummary::min_ms},
      {"mean_ms", &TimingSummary::mean_ms}};
  for (const auto& [side, timing] : {std::pair("candidate", &EvalResult::candidate),
                                     std::pair("baseline", &EvalResult::baseline)}) {
    for (const auto& [suffix, field] : timing_fields) {
      columns.push_back({std::string(side) + "_" + suffix, [timing = timing, field = field](R r) {
                           return (r.*timing) ? format_exact((r.*timing).value().*field) : "";
                         }});
    }
    columns.push_back({std::string(side) + "_iters", [timing = timing](R r) {
                         return (r.*timing) ? std::to_string((r.*timing)->iters) : "";
                       }});
  }
  columns.push_back({"speedup", [](R r) { return format_exact(r.speedup); }});
  columns.push_back({"speedup_ci_lo", [](R r) {
                       return r.speedup_ci95 ? format_exact(r.speedup_ci95->first) : "";
                     }});
  columns.push_back({"speedup_ci_hi", [](R r) {
                       return r.speedup_ci95 ? format_exact(r.speedup_ci95->second) : "";
                     }});
  const std::pair<const char*, double Utilization::*> utilization_fields[] = {
      {"gflops", &Utilization::gflops},
      {"pct_peak_flops", &Utilization::pct_peak_flops},
      {"gbps", &Utilization::gbps},
      {"pct_peak_bw", &Utilization::pct_peak_bw},
      {"peak_gflops", &Utilization::peak_gflops},
      {"peak_gbps", &Utilization::peak_gbps}};
  for (const auto& [name, field] : utilization_fields) {
    columns.push_back({name, [field = field](R r) {
                         return r.utilization ? format_exact(r.utilization.value().*field) : "";
                       }});
  }
  for (const auto& [name, field] :
       std::initializer_list<std::pair<const char*, double Utilization::*>>{
           {"intensity", &Utilization::intensity},
           {"balance", &Utilization::balance},
           {"roofline_ms", &Utilization::roofline_ms},
           {"pct_roofline", &Utilization::pct_roofline},
           {"library_ms", &Utilization::library_ms},
           {"library_gflops", &Utilization::library_gflops},
           {"pct_library", &Utilization::pct_library}}) {
    columns.push_back({name, [field = field](R r) {
                         return r.utilization && !r.utilization->bound.empty()
                                    ? format_exact(r.utilization.value().*field)
                                    : "";
                       }});
  }
  for (const auto& [name, field] :
       std::initializer_list<std::pair<const char*, std::string Utilization::*>>{
           {"peak_flops_kind", &Utilization::peak_flops_kind},
           {"math", &Utilization::math},
           {"bound", &Utilization::bound},
           {"library_method", &Utilization::library_method}}) {
    columns.push_back({name, [field = field](R r) {
                         return r.utilization ? r.utilization.value().*field : std::string();
                       }});
  }
  columns.push_back({"speedup_verdict", [](R r) { return r.speedup_verdict; }});
  const auto noise_number = [](double NoiseReport::*field) {
    return [field](R r) { return r.noise ? format_exact(r.noise.value().*field) : ""; };
  };
  const auto noise_int = [](int NoiseReport::*field) {
    return [field](R r) { return r.noise ? std::to_string(r.noise.value().*field) : ""; };
  };
  columns.push_back({"stable", [](R r) {
                       return r.noise ? std::string(r.noise->stable ? "true" : "false") : "";
                     }});
  columns.push_back(
      {"unstable_reason", [](R r) { return r.noise ? r.noise->unstable_reason : std::string(); }});
  columns.push_back({"cv_candidate", noise_number(&NoiseReport::cv_candidate)});
  columns.push_back({"cv_baseline", noise_number(&NoiseReport::cv_baseline)});
  columns.push_back({"steal_pct", noise_number(&NoiseReport::steal_pct)});
  columns.push_back({"disturbed_calls", noise_int(&NoiseReport::disturbed_calls)});
  columns.push_back({"clean_pairs", noise_int(&NoiseReport::clean_pairs)});
  columns.push_back({"ci_half_width_pct", noise_number(&NoiseReport::ci_half_width_pct)});
  columns.push_back(
      {"stop_reason", [](R r) { return r.noise ? r.noise->stop_reason : std::string(); }});
  columns.push_back({"baseline_path", [](R r) { return r.baseline_library_plan; }});
  columns.push_back({"warmup", [](R r) { return std::to_string(r.warmup); }});
  columns.push_back({"wall_s", [](R r) { return format_exact(r.wall_s); }});
  return columns;
}

void write_csv(std::ostream& out, std::span<const EvalResult> results) {
  // RFC 4180 ends records with CRLF; readers accept it everywhere, including inside quoted fields.
  constexpr const char* kEol = "\r\n";
  const std::vector<CsvColumn> columns = csv_columns();
  for (std::size_t c = 0; c < columns.size(); ++c) {
    out << (c ? "," : "") << csv_field(columns[c].name);
  }
  out << kEol;
  for (const EvalResult& result : results) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      out << (c ? "," : "") << csv_field(columns[c].cell(result));
    }
    out << kEol;
  }
}

void write_timing(std::ostream& out, const char* label, const TimingSummary& t,
                  const std::string& path = "") {
  out << "  " << label << "median " << format_sig(t.median_ms) << " ms  (p25 "
      << format_sig(t.p25_ms) << ", p75 " << format_sig(t.p75_ms) << ", min "
      << format_sig(t.min_ms) << "; ";
  if (t.used > 0 && t.used < t.iters) out << t.used << " of ";
  out << t.iters << " iters";
  if (t.wall_median_ms > 0 && std::fabs(t.wall_median_ms - t.median_ms) > 0.005 * t.median_ms)
    out << "; wall median " << format_sig(t.wall_median_ms);
  out << ")";
  if (!path.empty()) out << "  path " << path;
  out << '\n';
}

// "stable; 3 of 80 calls disturbed, steal 0.2%, per-call spread (IQR/median) 4.1% / 3.9%;
// ci_target after 40 pairs (CI +-1.2%)"
void write_noise(std::ostream& out, const std::string& label, const EvalResult& r) {
  const NoiseReport& n = *r.noise;
  out << "  " << label << (n.stable ? "stable" : "UNSTABLE");
  if (!n.stable && !n.unstable_reason.empty()) out << " (" << n.unstable_reason << ")";
  out << "; " << n.disturbed_calls << " of " << n.calls << " calls disturbed";
  if (n.unadjustable_calls > 0) out << " (" << n.unadjustable_calls << " beyond adjustment)";
  if (!n.accounted) out << " (unmeasured: no schedstat)";
  // The per-call spread of the times the medians are of (run-queue waits taken out), as IQR /
  // median. The stored CV (stddev / mean of every call's wall time) is not shown: at microsecond
  // calls one preempted call puts it in the hundreds of percent beside a stable verdict, which
  // rests on the paired ratios' CI below, not on single calls.
  const auto spread = [](const std::optional<TimingSummary>& t) {
    return t && t->median_ms > 0 ? format_pct(100 * (t->p75_ms - t->p25_ms) / t->median_ms) + "%"
                                 : std::string("n/a");
  };
  out << ", steal " << format_pct(n.steal_pct) << "%, per-call spread (IQR/median) ";
  if (r.candidate) out << spread(r.candidate) << " / ";
  out << spread(r.baseline);
  if (!n.stop_reason.empty()) {
    const int iters = r.baseline ? r.baseline->iters : 0;
    out << "; " << n.stop_reason << " after " << iters << (r.candidate ? " pairs" : " calls")
        << " (CI +-" << format_pct(n.ci_half_width_pct) << "%)";
  }
  if (const std::optional<OrderEffect>& o = n.order_effect; o && o->split > 0)
    out << "; order split " << format_sig(o->split) << " (" << format_sig(o->candidate_first)
        << "x candidate first, " << format_sig(o->baseline_first)
        << "x baseline first), carry-over " << format_sig(o->carryover);
  if (const std::optional<OrderEffect>& o = n.order_effect; o && carryover_beyond_chance(*o))
    out << " (the orders differ: the speedup is the order's nearer 1.0)";
  out << '\n';
}

// "83.1% of roofline (memory-bound; 40.1 ms at the roof); 95.3% of library ceiling (...)"
void write_roofline(std::ostream& out, const std::string& label, const Utilization& u,
                    bool ceiling_retimed) {
  out << "  " << label;
  if (u.bound.empty()) {
    out << "unknown (no peaks measured)";
  } else {
    out << format_pct(u.pct_roofline) << "% of roofline (" << u.bound << "-bound on "
        << (u.bound == "compute" ? u.peak_flops_kind : std::string("memory bandwidth")) << ", "
        << format_sig(u.roofline_ms) << " ms at the roof; intensity " << format_sig(u.intensity, 3)
        << " vs balance " << format_sig(u.balance, 3) << " flop/B)";
  }
  if (u.library_ms > 0) {
    out << "; " << format_pct(u.pct_library) << "% of library ceiling (" << format_sig(u.library_ms)
        << " ms: " << u.library_method << (ceiling_retimed ? "; timed again beside it" : "") << ")";
  }
  out << '\n';
}

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
  if (name == "table") return Format::kTable;
  if (name == "json") return Format::kJson;
  if (name == "csv") return Format::kCsv;
  return std::nullopt;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

void write_results(std::ostream& out, std::span<const EvalResult> results, Format format,
                   const JsonOptions& json_options) {
  switch (format) {
    case Format::kTable:
      write_table(out, results);
      return;
    case Format::kJson:
      write_json(out, results, json_options);
      return;
    case Format::kCsv:
      write_csv(out, results);
      return;
  }
}

void write_verdict(std::ostream& out, const EvalResult& r) {
  // Labels padded to one width so the values form a column.
  const auto label = [](const char* text) {
    std::string padded(text);
    padded.resize(std::max<std::size_t>(padded.size() + 1, 13), ' ');
    return padded;
  };

  out << r.workload << "  size=" << r.size << "  threads=" << r.threads;
  if (r.kind != "eval") out << "  kind=" << r.kind;
  out << "  ->  " << upper(status_name(r.status)) << '\n';
  if (!r.error.empty()) out << "  " << label("error") << terminal_safe(r.error) << '\n';
  if (!r.candidate_path.empty()) {
    out << "  " << label("candidate") << terminal_safe(r.candidate_path);
    if (!r.candidate_hash.empty()) out << "  (" << short_hash(r.candidate_hash) << ")";
    out << '\n';
  }

  const CorrectnessReport& c = r.correctness;
  // Errors are shown only where outputs were compared: a crash, a timeout or a rejection before
  // the first comparison measured none, and "max_abs_err 0" would read as a perfect result.
  if (c.trials > 0) {
    const char* trials = c.trials == 1 ? " trial" : " trials";
    out << "  " << label("correctness");
    if (c.passed)
      out << "passed over " << c.trials << trials;
    else if (!c.detail.empty())
      out << "FAILED over " << c.trials << trials;
    else
      out << c.trials << trials << " compared, within tolerance, before the check stopped";
    out << "; max_abs_err " << format_err(c.max_abs_err) << ", max_rel_err "
        << format_err(c.max_rel_err) << ", rel_l2_err " << format_err(c.rel_l2_err);
    // Every timed call ran on fresh inputs and was checked too; the errors above are the trials'
    // (a timed call the baseline's output vouches for has no error against the oracle measured).
    if (c.passed && r.candidate) {
      const int timed = r.candidate->iters;
      out << (timed == 1 ? "; the timed call passed too"
                         : "; the " + std::to_string(timed) + " timed calls passed too");
    }
    out << '\n';
  }
  if (!c.detail.empty()) out << "  " << label("detail") << terminal_safe(c.detail) << '\n';

  if (r.candidate) write_timing(out, label("candidate").c_str(), *r.candidate);
  if (r.baseline)
    write_timing(out, label("baseline").c_str(), *r.baseline, r.baseline_library_plan);
  if (r.speedup) {
    out << "  " << label("speedup") << format_sig(*r.speedup, 3) << "x";
    if (r.speedup_ci95) {
      out << "  (95% CI " << format_sig(r.speedup_ci95->first, 3) << "x .. "
          << format_sig(r.speedup_ci95->second, 3) << "x)";
    }
    if (r.speedup_verdict == "unstable") {
      out << "  unstable: no significant difference claimed";
    } else if (!r.speedup_verdict.empty()) {
      out << "  " << r.speedup_verdict;
      const bool excludes_one =
          r.speedup_ci95 && (r.speedup_ci95->first > 1.0 || r.speedup_ci95->second < 1.0);
      if (r.speedup_verdict == "no significant difference" && excludes_one)
        out << " (the CI clears 1.0 by less than two identical processes differ)";
    }
    out << '\n';
  }
  if (r.noise) write_noise(out, label("noise"), r);
  if (const auto& u = r.utilization) {
    out << "  " << label("utilization") << format_sig(u->gflops)
        << " GFLOP/s = " << format_pct(u->pct_peak_flops) << "% of " << format_sig(u->peak_gflops)
        << " peak";
    if (!u->peak_flops_kind.empty()) out << " (" << u->peak_flops_kind << ")";
    out << "; " << format_sig(u->gbps) << " GB/s = " << format_pct(u->pct_peak_bw) << "% of "
        << format_sig(u->peak_gbps) << " peak\n";
    write_roofline(out, label("roofline"), *u, r.library_ceiling && r.library_ceiling->retimed);
  }
  if (!r.suspicious.empty())
    out << "  " << label("suspicious") << terminal_safe(r.suspicious) << '\n';
  if (r.sandbox) {
    out << "  " << label("sandbox");
    for (std::size_t i = 0; i < r.sandbox->layers.size(); ++i)
      out << (i ? ", " : "") << r.sandbox->layers[i];
    out << '\n';
    for (const std::string& missing : r.sandbox->missing)
      out << "  " << label("WARNING") << "sandbox layer missing: " << missing << '\n';
  }
  // The warm-up calls precede the timing, so only a timed result had them.
  out << "  " << label("run");
  if (r.candidate) out << "warmup " << r.warmup << ", ";
  out << "wall " << format_sig(r.wall_s, 3) << " s";
  if (!r.created_at.empty()) out << ", " << r.created_at;
  out << '\n';

  if (r.status != Status::kCorrect && !r.diagnostics.empty()) {
    const std::vector<std::string_view> lines = split_lines(r.diagnostics);
    // A compiler's first errors explain the rest; a crashed worker's log ends with its cause.
    const bool head = r.status == Status::kCompileError;
    const std::size_t shown = std::min(lines.size(), kVerdictDiagnosticLines);
    const std::size_t first = head ? 0 : lines.size() - shown;
    out << "  " << label("diagnostics");
    if (shown < lines.size())
      out << "(" << (head ? "first " : "last ") << shown << " of " << lines.size() << " lines)";
    out << '\n';
    for (std::size_t i = first; i < first + shown; ++i)
      out << "    | " << terminal_safe(clip_line(lines[i], kVerdictDiagnosticLineBytes)) << '\n';
  }
}

}  // namespace kbench
