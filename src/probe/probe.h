// `kbench probe`: measured compute and memory peaks of this machine, the 100% of utilization
// reports.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kbench {

struct PeakReport {
  int threads = 1;
  // Each FMA counted as 2 flops per lane.
  double fp32_fma_gflops = 0;
  // vdpbf16ps, 4 flops per f32 lane (two multiply-adds); absent without avx512_bf16.
  std::optional<double> bf16_dot_gflops;
  // vfmadd*ph, 2 flops per fp16 lane; absent without avx512_fp16.
  std::optional<double> fp16_fma_gflops;
  // STREAM triad convention: 16 bytes read and 8 written per element; write-allocate not counted.
  double mem_bw_gbps = 0;
  // Which loops ran, e.g. "fp32:avx512f bf16:avx512_bf16 mem:triad".
  std::string isa_used;
  // Wall time of the whole probe.
  double seconds_taken = 0;

  nlohmann::json to_json() const;
  static PeakReport from_json(const nlohmann::json& j);
};

// Measures the peaks with `threads` OpenMP threads (<= 0: omp_get_max_threads()), each running the
// same register-resident loop; multi-thread numbers are the sum over threads. Takes about a second
// on one thread. Each figure is the best of several ~50 ms runs, since interference only slows a
// run.
PeakReport measure_peaks(int threads);

}  // namespace kbench
