// The machine facts kbench keys its per-machine caches by (probe figures, tuned configurations,
// GEMM path plans): what tells two machines apart must change the key.
#include <gtest/gtest.h>

#include "core/cpu_caches.h"
#include "core/environment.h"

namespace kbench {
namespace {

TEST(CpuCaches, SysfsSizesParse) {
  EXPECT_EQ(parse_cache_size("48K"), 48 * 1024);
  EXPECT_EQ(parse_cache_size("2M"), 2 * 1024 * 1024);
  EXPECT_EQ(parse_cache_size("491520K"), 491520L * 1024);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_EQ(parse_cache_size(""), 0);
  EXPECT_EQ(parse_cache_size("K"), 0);
}

TEST(CpuCaches, ThisMachineHasADataCacheHierarchy) {
  const CpuCaches& caches = cpu_caches();
  EXPECT_GT(caches.l1d_bytes, 0);
  EXPECT_GE(caches.l2_bytes, caches.l1d_bytes);
  EXPECT_EQ(current_environment().cpu_caches, caches.sizes());
  EXPECT_TRUE(caches.sizes().starts_with("L1d " + std::to_string(caches.l1d_bytes / 1024) + "K"))
      << caches.sizes();
}

// A hypervisor that masks the model name ("Intel(R) Xeon(R) Processor") can show two CPU
// generations with the same flags; their caches differ, and so must their key.
TEST(MachineId, ChangesWithTheCachesAndNotWithTheHost) {
  Environment a;
  a.cpu_model = "Intel(R) Xeon(R) Processor";
  a.cpu_flags = "avx2 fma avx512f avx512_bf16 amx_tile amx_bf16";
  a.logical_cpus = 2;
  a.cpu_caches = "L1d 48K L2 2048K L3 107520K";
  a.hostname = "one";
  Environment b = a;
  b.hostname = "two";
  EXPECT_EQ(a.machine_id(), b.machine_id());
  b.cpu_caches = "L1d 48K L2 2048K L3 327680K";
  EXPECT_NE(a.machine_id(), b.machine_id());
  b = a;
  b.cpu_flags = "avx2 fma";
  EXPECT_NE(a.machine_id(), b.machine_id());
  EXPECT_EQ(a.machine_id().size(), 16u);
}

}  // namespace
}  // namespace kbench
