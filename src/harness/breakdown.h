// Where a baseline's time goes: its calls into the GEMM and convolution libraries, each timed from
// inside the baseline's own run, and the passes between them (elementwise epilogues left outside
// the library, normalizations, softmaxes, gathers, conversions). What a kernel engineer asks of a
// baseline first, on any machine: is it the library's time, or ours?
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/workload.h"

namespace kbench {

struct BreakdownPart {
  std::string call;       // ops::LibraryCall::key(): "gemm 768x2688x768:nn:bf16:t1", "conv2d ..."
  int calls_per_run = 0;  // how many times one baseline run makes it
  double ms = 0;          // its time per baseline run (median over the timed runs)
  // Some of its calls ran inside an OpenMP parallel region: the library got one thread of the
  // budget there, and `ms` may count overlapping time.
  bool in_parallel_region = false;
  // Its calls were spread over this many threads, one each (0: not): `ms` is their summed time
  // divided by that, their share of the run's wall time when the threads are evenly loaded.
  int spread_over = 0;
};

struct Breakdown {
  int runs = 0;                      // timed baseline runs the medians are over
  double total_ms = 0;               // one baseline run, median
  double library_ms = 0;             // the parts' sum
  std::vector<BreakdownPart> parts;  // in first-call order
  // The share of a run spent outside library calls, in [0, 1].
  double outside_library_share() const;
  // The share of a run one part takes; 0 for a run of no measured time.
  double share_of(const BreakdownPart& part) const { return total_ms > 0 ? part.ms / total_ms : 0; }
};

// Runs `workload`'s baseline in this process (trusted code) with bf16 outputs, as it is timed:
// `threads` OpenMP and BLAS threads, this thread pinned to worker_cpus(threads), the library plan
// `library_plan` (ops::set_library_plan's encoding; empty keeps the process's). Two untimed runs,
// then `runs` timed ones, each recording its library calls.
Breakdown measure_breakdown(const Workload& workload, Size size, int threads,
                            const std::string& library_plan, std::uint64_t seed, int runs);

}  // namespace kbench
