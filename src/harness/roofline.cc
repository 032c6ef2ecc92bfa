// Roofline arithmetic (definitions in roofline.h).
#include "harness/roofline.h"

#include <algorithm>

namespace kbench {

const char* bound_name(Bound bound) {
  switch (bound) {
    case Bound::kCompute:
      return "compute";
    case Bound::kMemory:
      return "memory";
    case Bound::kUnknown:
      break;
  }
  return "";
}

Roofline roofline(double flops, double bytes, double compute_gflops, double bandwidth_gbps) {
  Roofline r;
  if (!(compute_gflops > 0) || !(bandwidth_gbps > 0)) return r;
  r.balance = compute_gflops / bandwidth_gbps;
  if (bytes > 0) {
    r.intensity = flops / bytes;
    r.bound = r.intensity >= r.balance ? Bound::kCompute : Bound::kMemory;
  } else {
    r.bound = Bound::kCompute;
  }
  r.time_s = std::max(flops / (compute_gflops * 1e9), bytes / (bandwidth_gbps * 1e9));
  return r;
}

double pct_of_roofline(const Roofline& roof, double measured_s) {
  if (!(roof.time_s > 0) || !(measured_s > 0)) return 0;
  return 100.0 * roof.time_s / measured_s;
}

std::pair<double, std::string> compute_roof(MathClass math, const PeakReport& peaks) {
  std::pair<double, std::string> roof =
      math == MathClass::kBf16Matmul ? peaks.bf16_matmul_peak()
                                     : std::pair(peaks.fp32_fma_gflops, std::string("fp32_fma"));
  if (!(roof.first > 0)) return {0, ""};
  return roof;
}

Utilization utilization_of(const Problem& problem, MathClass math, double median_ms,
                           const std::optional<PeakReport>& peaks,
                           const std::optional<LibraryCeiling>& ceiling) {
  Utilization u;
  u.math = math_class_name(math);
  const double seconds = median_ms * 1e-3;
  if (seconds > 0) {
    u.gflops = problem.flops / seconds * 1e-9;
    u.gbps = problem.min_bytes / seconds * 1e-9;
  }
  // The floor is what the work cannot avoid: a causal kernel that skips the masked half is not
  // faster than physics, and one at the floor of the full count would be.
  const double floor_flops = problem.essential_flops > 0 ? problem.essential_flops : problem.flops;
  if (problem.min_bytes > 0) u.intensity = floor_flops / problem.min_bytes;
  if (ceiling && ceiling->ms > 0) {
    u.library_ms = ceiling->ms;
    u.library_gflops = problem.flops / (ceiling->ms * 1e-3) * 1e-9;
    for (const LibraryCeilingPart& part : ceiling->parts) {
      if (!u.library_method.empty()) u.library_method += "; ";
      u.library_method += part.call + " " + part.path;
      if (part.count > 1) u.library_method += " x" + std::to_string(part.count);
    }
    if (seconds > 0) u.pct_library = 100 * ceiling->ms * 1e-3 / seconds;
  }
  if (!peaks) return u;
  const auto [roof_gflops, unit] = compute_roof(math, *peaks);
  u.peak_gflops = roof_gflops;
  u.peak_flops_kind = unit;
  u.peak_gbps = peaks->mem_bw_gbps > 0 ? peaks->mem_bw_gbps : 0;
  if (u.peak_gflops > 0) u.pct_peak_flops = 100 * u.gflops / u.peak_gflops;
  if (u.peak_gbps > 0) u.pct_peak_bw = 100 * u.gbps / u.peak_gbps;
  const Roofline roof = roofline(floor_flops, problem.min_bytes, u.peak_gflops, u.peak_gbps);
  u.balance = roof.balance;
  u.bound = bound_name(roof.bound);
  u.roofline_ms = roof.time_s * 1e3;
  u.pct_roofline = pct_of_roofline(roof, seconds);
  return u;
}

std::optional<LibraryCeiling> settled_library_ceiling(
    const std::optional<LibraryCeiling>& cached, double baseline_median_ms,
    const std::function<std::optional<LibraryCeiling>()>& retime) {
  if (!cached || !retime || !(baseline_median_ms > 0)) return cached;
  if (100 * cached->ms / baseline_median_ms <= kMaxBaselinePctLibrary) return cached;
  std::optional<LibraryCeiling> fresh = retime();
  if (!fresh) return cached;
  fresh->retimed = true;
  return fresh;
}

}  // namespace kbench
