// The data caches of this machine's CPUs, as the kernel describes them: kernels' blocking, the
// probe's buffer sizes and the tuned configurations all depend on them.
#pragma once

#include <string>

namespace kbench {

struct CpuCaches {
  long l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // one instance each; 0: unknown
  int l3_shared_by = 0;                            // logical CPUs sharing one L3 (0: unknown)

  // "L1d 48K L2 2048K L3 491520K": the sizes, for keys and summaries.
  std::string sizes() const;
};

// CPU 0's caches from /sys/devices/system/cpu/cpu0/cache (read once per process). Where sysfs is
// absent (some containers) glibc answers from cpuid, which on AMD parts sums the L3 instances.
const CpuCaches& cpu_caches();

// "48K" -> 49152: sysfs writes cache sizes with a K or M suffix. 0 when `text` holds no number.
long parse_cache_size(const std::string& text);

}  // namespace kbench
