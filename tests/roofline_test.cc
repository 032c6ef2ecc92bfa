// Known-answer tests of the roofline: which roof binds, the time at the roof, % of roofline, the
// compute roof per math class, and what is left unknown when the probe measured nothing.
#include "harness/roofline.h"

#include <gtest/gtest.h>

namespace kbench {
namespace {

TEST(Roofline, ComputeBoundWhenIntensityReachesBalance) {
  // 100 GFLOP/s and 10 GB/s: balance 10 flop/B. 1e9 flops over 1e7 bytes: intensity 100.
  const Roofline r = roofline(1e9, 1e7, 100, 10);
  EXPECT_DOUBLE_EQ(r.balance, 10);
  EXPECT_DOUBLE_EQ(r.intensity, 100);
  EXPECT_EQ(r.bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(r.time_s, 1e9 / 100e9);  // 10 ms at the compute roof; 1 ms of traffic
  // Exactly at the balance point both roofs take the same time and the compute roof is named.
  EXPECT_EQ(roofline(1e9, 1e8, 100, 10).bound, Bound::kCompute);
}

TEST(Roofline, MemoryBoundBelowBalance) {
  // RMSNorm-like: 5 flops per 4 bytes.
  const Roofline r = roofline(5e8, 4e8, 150, 5);
  EXPECT_DOUBLE_EQ(r.intensity, 1.25);
  EXPECT_DOUBLE_EQ(r.balance, 30);
  EXPECT_EQ(r.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(r.time_s, 4e8 / 5e9);  // 80 ms of traffic
  EXPECT_DOUBLE_EQ(pct_of_roofline(r, 0.160), 50.0);
  EXPECT_DOUBLE_EQ(pct_of_roofline(r, 0.080), 100.0);
}

TEST(Roofline, UnknownWithoutRoofsAndNoMeasurement) {
  EXPECT_EQ(roofline(1e9, 1e7, 0, 10).bound, Bound::kUnknown);
  EXPECT_EQ(roofline(1e9, 1e7, 100, 0).bound, Bound::kUnknown);
  EXPECT_DOUBLE_EQ(roofline(1e9, 1e7, 0, 10).time_s, 0);
  EXPECT_DOUBLE_EQ(pct_of_roofline(roofline(1e9, 1e7, 0, 10), 1.0), 0);
  EXPECT_DOUBLE_EQ(pct_of_roofline(roofline(1e9, 1e7, 100, 10), 0), 0);
  EXPECT_EQ(roofline(1e9, 0, 100, 10).bound, Bound::kCompute);  // nothing to move
  EXPECT_STREQ(bound_name(Bound::kMemory), "memory");
  EXPECT_STREQ(bound_name(Bound::kUnknown), "");
}

PeakReport peaks_with(std::optional<double> amx, std::optional<double> dot) {
  PeakReport p;
  p.fp32_fma_gflops = 150;
  p.bf16_dot_gflops = dot;
  p.amx_bf16_gflops = amx;
  p.mem_bw_gbps = 10;
  return p;
}

TEST(ComputeRoof, MathClassPicksTheUnit) {
  EXPECT_EQ(compute_roof(MathClass::kF32Vector, peaks_with(2000, 300)),
            std::pair(150.0, std::string("fp32_fma")));
  EXPECT_EQ(compute_roof(MathClass::kBf16Matmul, peaks_with(2000, 300)),
            std::pair(2000.0, std::string("amx_bf16")));
  EXPECT_EQ(compute_roof(MathClass::kBf16Matmul, peaks_with(std::nullopt, 300)),
            std::pair(300.0, std::string("bf16_dot")));
  EXPECT_EQ(compute_roof(MathClass::kBf16Matmul, peaks_with(std::nullopt, 75)),
            std::pair(150.0, std::string("fp32_fma")));
  EXPECT_EQ(compute_roof(MathClass::kBf16Matmul, peaks_with(std::nullopt, std::nullopt)),
            std::pair(150.0, std::string("fp32_fma")));
  EXPECT_EQ(compute_roof(MathClass::kBf16Matmul, PeakReport{}), std::pair(0.0, std::string()));
}

Problem gemm_problem() {
  Problem p;
  p.flops = 2.0 * 512 * 512 * 512;    // 268 MFLOP
  p.min_bytes = 2.0 * 3 * 512 * 512;  // three bf16 matrices
  return p;
}

TEST(UtilizationOf, FillsTheRooflineAndTheLibraryCeiling) {
  const PeakReport peaks = peaks_with(std::nullopt, 300);
  const Problem p = gemm_problem();
  // The workload's own library calls: one GEMM at 1.5 ms on its fastest path.
  const LibraryCeiling ceiling{1.5,
                               {{"gemm 512x512x512:nn:bf16:t1", 1, p.flops, "onednn_bf16", 1.5}}};
  // At 2 ms: 134.2 GFLOP/s.
  const Utilization u = utilization_of(p, MathClass::kBf16Matmul, 2.0, peaks, ceiling);
  EXPECT_EQ(u.math, "bf16_matmul");
  EXPECT_EQ(u.peak_flops_kind, "bf16_dot");
  EXPECT_DOUBLE_EQ(u.peak_gflops, 300);
  EXPECT_NEAR(u.gflops, p.flops / 2e-3 * 1e-9, 1e-9);
  EXPECT_NEAR(u.pct_peak_flops, 100 * u.gflops / 300, 1e-9);
  EXPECT_DOUBLE_EQ(u.balance, 30);
  EXPECT_NEAR(u.intensity, p.flops / p.min_bytes, 1e-12);
  EXPECT_EQ(u.bound, "compute");  // intensity 170 flop/B
  EXPECT_NEAR(u.roofline_ms, p.flops / 300e9 * 1e3, 1e-12);
  EXPECT_NEAR(u.pct_roofline, 100 * u.roofline_ms / 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(u.library_ms, 1.5);
  EXPECT_NEAR(u.library_gflops, p.flops / 1.5e-3 * 1e-9, 1e-9);
  EXPECT_EQ(u.library_method, "gemm 512x512x512:nn:bf16:t1 onednn_bf16");
  EXPECT_NEAR(u.pct_library, 75.0, 1e-9);
  // Calls made several times count as often, and say so.
  const LibraryCeiling repeated{3.0, {{"gemm 64x64x64:nt:bf16:t1", 3, 5e5, "onednn_f32", 1.0}}};
  const Utilization r = utilization_of(p, MathClass::kBf16Matmul, 2.0, peaks, repeated);
  EXPECT_NEAR(r.pct_library, 150.0, 1e-9);
  EXPECT_EQ(r.library_method, "gemm 64x64x64:nt:bf16:t1 onednn_f32 x3");
}

LibraryCeiling one_gemm_ceiling(double ms) {
  return {ms, {{"gemm 512x512x512:nn:bf16:t1", 1, 2.0 * 512 * 512 * 512, "mkl_sgemm", ms}}};
}

// The ceiling's times are cached machine facts; a baseline that outruns them beyond noise has them
// timed again, and only then.
TEST(SettledLibraryCeiling, IsTimedAgainOnlyWhereTheBaselineOutranIt) {
  int retimes = 0;
  const auto retime = [&retimes]() -> std::optional<LibraryCeiling> {
    ++retimes;
    return one_gemm_ceiling(1.9);
  };
  // The baseline at 2 ms against a ceiling of 2.1 ms: 105%, within noise; it stands.
  const std::optional<LibraryCeiling> within =
      settled_library_ceiling(one_gemm_ceiling(2.1), 2.0, retime);
  EXPECT_EQ(retimes, 0);
  ASSERT_TRUE(within);
  EXPECT_DOUBLE_EQ(within->ms, 2.1);
  EXPECT_FALSE(within->retimed);
  // Against 3 ms (150%): the cached figure was taken in a slow moment; the fresh one replaces it.
  const std::optional<LibraryCeiling> outran =
      settled_library_ceiling(one_gemm_ceiling(3.0), 2.0, retime);
  EXPECT_EQ(retimes, 1);
  ASSERT_TRUE(outran);
  EXPECT_DOUBLE_EQ(outran->ms, 1.9);
  EXPECT_DOUBLE_EQ(outran->parts.at(0).best_ms, 1.9);
  EXPECT_TRUE(outran->retimed);
}

TEST(SettledLibraryCeiling, TheCachedOneStandsWhereNothingCanTimeItAgain) {
  const auto none = []() -> std::optional<LibraryCeiling> { return std::nullopt; };
  const std::optional<LibraryCeiling> unretimable =
      settled_library_ceiling(one_gemm_ceiling(3.0), 2.0, none);
  ASSERT_TRUE(unretimable);
  EXPECT_DOUBLE_EQ(unretimable->ms, 3.0);
  EXPECT_FALSE(unretimable->retimed);
  const std::optional<LibraryCeiling> without_hook =
      settled_library_ceiling(one_gemm_ceiling(3.0), 2.0, {});
  ASSERT_TRUE(without_hook);
  EXPECT_FALSE(without_hook->retimed);
  bool called = false;
  const auto retime = [&called]() -> std::optional<LibraryCeiling> {
    called = true;
    return one_gemm_ceiling(1.0);
  };
  EXPECT_FALSE(settled_library_ceiling(std::nullopt, 2.0, retime));
  EXPECT_TRUE(settled_library_ceiling(one_gemm_ceiling(3.0), 0.0, retime));  // no baseline time
  EXPECT_FALSE(called);
}

// A causal workload's floor is its essential FLOPs (the visible half); GFLOP/s stay on the spec's
// count, so they compare with JAXBench's.
TEST(UtilizationOf, TheFloorIsTheEssentialWorkAndTheRateTheSpecsCount) {
  const PeakReport peaks = peaks_with(std::nullopt, 300);
  Problem full = gemm_problem();
  Problem causal = full;
  causal.essential_flops = full.flops / 2;
  const Utilization u_full = utilization_of(full, MathClass::kBf16Matmul, 2.0, peaks);
  const Utilization u = utilization_of(causal, MathClass::kBf16Matmul, 2.0, peaks);
  EXPECT_DOUBLE_EQ(u.gflops, u_full.gflops);
  EXPECT_NEAR(u.roofline_ms, u_full.roofline_ms / 2, 1e-12);
  EXPECT_NEAR(u.pct_roofline, u_full.pct_roofline / 2, 1e-9);
  EXPECT_NEAR(u.intensity, u_full.intensity / 2, 1e-9);
}

TEST(UtilizationOf, WithoutLibraryCallsThereIsNoCeilingAndMissingPeaksStayUnknown) {
  PeakReport peaks = peaks_with(2000, 300);
  peaks.library_gemm_gflops = 200;  // the machine's figure: not a ceiling for this workload
  Problem rows;
  rows.flops = 5e8;
  rows.min_bytes = 4e8;
  const Utilization u = utilization_of(rows, MathClass::kF32Vector, 100, peaks);
  EXPECT_EQ(u.peak_flops_kind, "fp32_fma");
  EXPECT_EQ(u.bound, "memory");
  EXPECT_DOUBLE_EQ(u.library_gflops, 0);
  EXPECT_DOUBLE_EQ(u.pct_library, 0);
  EXPECT_NEAR(u.pct_roofline, 40.0, 1e-9);  // 40 ms of traffic (4e8 B at 10 GB/s) in 100 ms

  // No probe at all, or a probe that measured nothing.
  const Utilization none = utilization_of(rows, MathClass::kF32Vector, 100, std::nullopt);
  EXPECT_EQ(none.bound, "");
  EXPECT_DOUBLE_EQ(none.pct_roofline, 0);
  EXPECT_GT(none.gflops, 0);
  const Utilization zero = utilization_of(gemm_problem(), MathClass::kBf16Matmul, 2, PeakReport{});
  EXPECT_EQ(zero.bound, "");
  EXPECT_EQ(zero.peak_flops_kind, "");
  EXPECT_DOUBLE_EQ(zero.library_gflops, 0);
}

}  // namespace
}  // namespace kbench
