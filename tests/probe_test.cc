// Plausibility of the measured peaks (not speed targets: machines differ) and their JSON round
// trip.
#include "probe/probe.h"

#include <gtest/gtest.h>

#include "core/environment.h"

namespace kbench {
namespace {

TEST(Probe, SingleThreadPeaksArePlausible) {
  const PeakReport r = measure_peaks(1);
  EXPECT_EQ(r.threads, 1);
  // Floors any x86-64 core clears by orders of magnitude, even under load or emulation.
  EXPECT_GT(r.fp32_fma_gflops, 1.0);
  EXPECT_GT(r.mem_bw_gbps, 0.5);
  // Ceilings that only a broken timer or a loop the compiler removed would exceed: 2 x 512-bit FMA
  // pipes at 6 GHz is 384 GFLOP/s per core, and no single core streams 1 TB/s.
  EXPECT_LT(r.fp32_fma_gflops, 1000.0);
  EXPECT_LT(r.mem_bw_gbps, 1000.0);
  EXPECT_EQ(r.bf16_dot_gflops.has_value(), cpu_has("avx512_bf16"));
  EXPECT_EQ(r.fp16_fma_gflops.has_value(), cpu_has("avx512_fp16"));
  if (r.bf16_dot_gflops) {
    EXPECT_GT(*r.bf16_dot_gflops, 1.0);
  }
  if (r.fp16_fma_gflops) {
    EXPECT_GT(*r.fp16_fma_gflops, 1.0);
  }
  EXPECT_FALSE(r.isa_used.empty());
  EXPECT_GT(r.seconds_taken, 0.0);
  RecordProperty("fp32_fma_gflops", std::to_string(r.fp32_fma_gflops));
  RecordProperty("mem_bw_gbps", std::to_string(r.mem_bw_gbps));
}

TEST(Probe, JsonRoundTrip) {
  PeakReport r;
  r.threads = 4;
  r.fp32_fma_gflops = 700.5;
  r.bf16_dot_gflops = 1400.25;
  r.mem_bw_gbps = 55.5;
  r.isa_used = "fp32:avx512f bf16:avx512_bf16 mem:triad";
  r.seconds_taken = 1.25;
  const nlohmann::json j = r.to_json();
  EXPECT_TRUE(
      j.at("fp16_fma_gflops").is_null());  // absent, not zero: zero would read as a measurement
  const PeakReport back = PeakReport::from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.threads, r.threads);
  EXPECT_DOUBLE_EQ(back.fp32_fma_gflops, r.fp32_fma_gflops);
  ASSERT_TRUE(back.bf16_dot_gflops.has_value());
  EXPECT_DOUBLE_EQ(*back.bf16_dot_gflops, *r.bf16_dot_gflops);
  EXPECT_FALSE(back.fp16_fma_gflops.has_value());
  EXPECT_DOUBLE_EQ(back.mem_bw_gbps, r.mem_bw_gbps);
  EXPECT_EQ(back.isa_used, r.isa_used);
  EXPECT_DOUBLE_EQ(back.seconds_taken, r.seconds_taken);
}

}  // namespace
}  // namespace kbench
