// The roofline of this machine for one workload: which roof binds (compute or memory), the time a
// kernel would take running at that roof, and how close a measured time comes to it.
//
//   compute roof  = the peak of the unit that does the workload's math:
//                   PeakReport::bf16_matmul_peak (the fastest of AMX-BF16, avx512_bf16 dot and
//                   fp32 FMA) for bf16 matmul-class work, fp32 FMA for f32 vector work
//   balance       = compute roof / memory bandwidth               (flops per byte)
//   intensity     = flops / minimal bytes moved                   (flops per byte)
//   bound         = "compute" when intensity >= balance, else "memory"
//   roofline time = max(flops / compute roof, bytes / bandwidth)
//   % of roofline = roofline time / measured time
// Beside it, the library ceiling (LibraryCeiling): the time the fastest library paths take for
// the workload's own library calls at their own shapes, as a share of the measured time. A
// baseline, being those calls plus the passes between them, stays below 100%; kbench run flags a
// baseline above kMaxBaselinePctLibrary as a ceiling that missed a call or was measured unlike it.
// The ceiling's times are machine facts, timed once and cached; a baseline that outruns them is
// first taken as a sign that they were timed in a slow moment, and they are timed again beside it
// (settled_library_ceiling).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "harness/eval_result.h"
#include "probe/probe.h"
#include "workloads/workload.h"

namespace kbench {

enum class Bound { kUnknown, kCompute, kMemory };
const char* bound_name(Bound bound);  // "", "compute", "memory"

struct Roofline {
  double intensity = 0;  // flops / byte
  double balance = 0;    // flops / byte at which both roofs meet
  Bound bound = Bound::kUnknown;
  double time_s = 0;  // at the binding roof
};

// From the problem's flops and bytes and the two roofs (GFLOP/s, GB/s). Unknown (all 0) when a roof
// is not positive; a problem without flops is memory-bound, without bytes compute-bound.
Roofline roofline(double flops, double bytes, double compute_gflops, double bandwidth_gbps);

// 100 * roofline time / measured time; 0 when either is not positive.
double pct_of_roofline(const Roofline& roof, double measured_s);

// The compute roof for `math` on this machine: {GFLOP/s, unit name}; {0, ""} when unmeasured.
std::pair<double, std::string> compute_roof(MathClass math, const PeakReport& peaks);

// Every Utilization field for a kernel of `problem` with `math` that took `median_ms`; roofs stay 0
// (unknown) without `peaks` or where the probe measured none, the library figures without
// `ceiling`.
Utilization utilization_of(const Problem& problem, MathClass math, double median_ms,
                           const std::optional<PeakReport>& peaks,
                           const std::optional<LibraryCeiling>& ceiling = std::nullopt);

// A baseline above this share of its own library ceiling means the ceiling is wrong: noise is a
// few percent, a baseline's extra passes only add time.
constexpr double kMaxBaselinePctLibrary = 105;

// The ceiling a result's library figures rest on: `cached`, unless the baseline, at
// `baseline_median_ms`, ran above kMaxBaselinePctLibrary of it. Then the cached times were taken
// while something slowed the core (another process on it, a slow hour of a shared host: on the
// Emerald Rapids VM a GEMM cached at 31.2 ms ran in 23.3 ms hours later), and `retime` times
// the calls again now, under the baseline's own conditions; its ceiling comes back marked
// `retimed`. `cached` stays where `retime` is empty or yields none.
std::optional<LibraryCeiling> settled_library_ceiling(
    const std::optional<LibraryCeiling>& cached, double baseline_median_ms,
    const std::function<std::optional<LibraryCeiling>()>& retime);

}  // namespace kbench
