// docs/baselines.md's table: see baselines_markdown.h.
#include "cli/baselines_markdown.h"

#include <cstdio>
#include <set>
#include <sstream>

#include "cli/jaxbench_times.h"
#include "core/environment.h"
#include "workloads/registry.h"

namespace kbench::cli {
namespace {

std::string format(const char* pattern, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, value);
  return buf;
}

// "768x1536, 1536x1536, 1536": the input shapes in call order.
std::string shapes_of(const Problem& problem) {
  std::string text;
  for (const InputSpec& in : problem.inputs) {
    if (!text.empty()) text += ", ";
    if (in.tensor.shape.empty()) text += "scalar";
    for (std::size_t d = 0; d < in.tensor.shape.size(); ++d) {
      if (d > 0) text += 'x';
      text += std::to_string(in.tensor.shape[d]);
    }
  }
  return text;
}

// The distinct library paths of a plan "call=path;call=path", or "-" for a baseline without
// library calls.
std::string paths_of(const std::string& plan) {
  std::set<std::string> paths;
  std::stringstream entries(plan);
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    const auto eq = entry.find('=');
    if (eq != std::string::npos) paths.insert(entry.substr(eq + 1));
  }
  std::string text;
  for (const std::string& p : paths) {
    if (!text.empty()) text += " + ";
    text += p;
  }
  return text.empty() ? "-" : text;
}

// "2.41x [2.30, 2.52]" for a correct expert; its status where it failed; "-" where there is none.
std::string expert_cell(const EvalResult& r) {
  if (!r.expert) return "-";
  const ExpertSummary& e = *r.expert;
  if (e.status != Status::kCorrect || !e.speedup) return status_name(e.status);
  std::string cell = format("%.2f", *e.speedup) + "x";
  if (e.speedup_ci95)
    cell += " [" + format("%.2f", e.speedup_ci95->first) + ", " +
            format("%.2f", e.speedup_ci95->second) + "]";
  return cell;
}

}  // namespace

void write_baselines_markdown(std::ostream& os, const std::vector<EvalResult>& results,
                              const PeakReport& peaks, const std::map<std::string, XlaTiming>& xla,
                              const std::string& command) {
  const Environment& env = current_environment();
  os << "Measured by `" << command << "` on " << env.cpu_model << " (" << env.cpu_flags
     << "), kbench " << env.kbench_commit << ". Roofs on " << peaks.threads
     << " thread(s): fp32 FMA " << format("%.0f", peaks.fp32_fma_gflops) << " GFLOP/s, bf16 matmul "
     << format("%.0f", peaks.bf16_matmul_peak().first) << " GFLOP/s ("
     << peaks.bf16_matmul_peak().second << "), best library GEMM "
     << format("%.0f", peaks.library_gemm_gflops) << " GFLOP/s (" << peaks.library_gemm_method
     << "), triad " << format("%.1f", peaks.mem_bw_gbps)
     << " GB/s. % library: the baseline's time against its own library calls alone, each at the "
        "fastest library path for its shape.\n\n";
  os << "| workload | size (inputs) | GFLOP | MB | baseline ms | library path | % roofline | "
        "bound | % library | XLA:CPU ms | XLA / kbench (interleaved) | TPU v6e XLA ms (full) | "
        "expert speedup [95% CI] |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const EvalResult& r : results) {
    const Workload* w = find_workload(r.workload);
    if (!w) continue;
    const Size size = parse_size(r.size).value_or(Size::kCpu);
    const Problem problem = w->problem(size);
    os << "| " << r.workload << " | " << r.size << " (" << shapes_of(problem) << ") | "
       << format("%.3g", problem.flops * 1e-9) << " | " << format("%.3g", problem.min_bytes * 1e-6)
       << " | ";
    if (r.status != Status::kCorrect || !r.baseline) {
      os << status_name(r.status) << ": " << r.error << " | | | | | | | | |\n";
      continue;
    }
    const double ms = r.baseline->median_ms;
    os << format("%.2f", ms) << " | " << paths_of(r.baseline_library_plan) << " | ";
    if (r.utilization) {
      const Utilization& u = *r.utilization;
      os << format("%.0f", u.pct_roofline) << " | " << u.bound << " (" << u.peak_flops_kind
         << ") | " << (u.library_ms > 0 ? format("%.0f", u.pct_library) : "-") << " | ";
    } else {
      os << "- | - | - | ";
    }
    const auto peer = xla.find(r.workload);
    if (peer != xla.end()) {
      const XlaTiming& t = peer->second;
      os << format("%.2f", t.xla_median_ms) << " | "
         << (t.xla_over_kbench > 0 ? format("%.2f", t.xla_over_kbench)
                                   : format("%.2f", t.xla_median_ms / ms) + " (not interleaved)")
         << " | ";
    } else {
      os << "- | - | ";
    }
    const auto tpu = tpu_v6e_xla_ms(w->id());
    os << (tpu ? format("%.3g", *tpu) : "-") << " | " << expert_cell(r) << " |\n";
  }
  bool first = true;
  for (const EvalResult& r : results) {
    if (r.suspicious.empty()) continue;
    os << (first ? "\nSuspicious:\n" : "") << "- " << r.workload << ": " << r.suspicious << "\n";
    first = false;
  }
}

}  // namespace kbench::cli
