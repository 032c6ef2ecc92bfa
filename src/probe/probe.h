// `kbench probe`: measured compute and memory peaks of this machine, the 100% of utilization
// reports.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace kbench {

struct PeakReport {
  int threads = 1;
  // Each FMA counted as 2 flops per lane.
  double fp32_fma_gflops = 0;
  // The same loop at 256 bits where the widest is 512 (avx512f): cores clock ymm code higher than
  // zmm code, so a loop's time needs the clock of its width. Absent without avx512f.
  std::optional<double> fp32_fma_ymm_gflops;
  // vdpbf16ps, 4 flops per f32 lane (two multiply-adds); absent without avx512_bf16.
  std::optional<double> bf16_dot_gflops;
  // vfmadd*ph, 2 flops per fp16 lane; absent without avx512_fp16.
  std::optional<double> fp16_fma_gflops;
  // tdpbf16ps on register-resident tiles, 2*16*16*32 flops per instruction; absent without amx_bf16
  // or when the kernel refuses the tile-data permission (arch_prctl ARCH_REQ_XCOMP_PERM).
  std::optional<double> amx_bf16_gflops;
  // The library ceiling: the fastest bf16 GEMM (bf16 in and out, f32 accumulation) this machine's
  // libraries reach at a large square shape, over every path ops::gemm offers (oneDNN bf16, oneDNN
  // f32 after widening, OpenBLAS sgemm after widening). 0 when not measured.
  double library_gemm_gflops = 0;
  std::string library_gemm_method;  // the winning path and shape, e.g. "onednn_bf16 2048^3"
  // GFLOP/s of every path that ran, by ops::gemm_path_name; a path this machine lacks is absent.
  std::map<std::string, double> library_gemm_paths;
  // STREAM triad convention: 16 bytes read and 8 written per element; write-allocate not counted.
  double mem_bw_gbps = 0;
  // Which loops ran, e.g. "fp32:avx512f bf16:avx512_bf16 mem:triad".
  std::string isa_used;
  // How each figure was measured, keyed by its name in to_json ("fp32_fma", "bf16_dot", "fp16_fma",
  // "amx_bf16", "library_gemm", "mem_bw"), e.g. "amx_bf16": "amx_bf16 tdpbf16ps, 4 accumulator
  // tiles 16x16 f32"; only the figures that were measured have an entry.
  std::map<std::string, std::string> methods;
  // Wall time of the whole probe.
  double seconds_taken = 0;

  // The fastest measured unit that computes bf16 matmul math (bf16 products, f32 sums): AMX-BF16,
  // avx512_bf16 dot or fp32 FMA after widening, whichever measured the highest rate (a bf16 product
  // is exact in f32, so all three compute the same math). fp16 is other math and never counts.
  // Returns {GFLOP/s, unit name as in to_json: "amx_bf16" | "bf16_dot" | "fp32_fma"}.
  std::pair<double, std::string> bf16_matmul_peak() const;

  // The JSON form, stamped with kFormatVersion. from_json throws on a missing key or another
  // version, so a cached entry from an older probe (one that lacks a figure) is measured again.
  static constexpr int kFormatVersion = 3;
  nlohmann::json to_json() const;
  static PeakReport from_json(const nlohmann::json& j);
};

// Each figure the higher of `a`'s and `b`'s, with its method (interference only slows a run, so
// the higher is the truer); a figure only one measured is kept. seconds_taken is `b`'s.
PeakReport higher_of(const PeakReport& a, const PeakReport& b);

// Measures the peaks with `threads` OpenMP threads (<= 0: omp_get_max_threads()), each running the
// same register-resident loop; multi-thread numbers are the sum over threads. The library ceiling
// runs each ops::gemm_on_path path with that many threads. Takes about three seconds on one thread.
// Each figure is the best of several runs, since interference only slows a run.
PeakReport measure_peaks(int threads);

}  // namespace kbench
