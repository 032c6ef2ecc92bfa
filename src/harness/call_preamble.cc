// Cache eviction with clflushopt (clflush where the CPU lacks it) and the settling pause.
#include "harness/call_preamble.h"

#include <cpuid.h>
#include <immintrin.h>
#include <time.h>

#include <cstdint>

#include "core/tensor.h"

namespace kbench {
namespace {

constexpr std::size_t kLine = 64;

bool cpu_has_clflushopt() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) != 0;
}

// clflushopt lets many lines be in flight at once (weakly ordered, fenced at the end); about 20
// GB/s of arena on the AMX Xeon, clflush about a third of that.
__attribute__((target("clflushopt"))) void flush_lines_opt(const char* begin, const char* end) {
  for (const char* p = begin; p < end; p += kLine) _mm_clflushopt(const_cast<char*>(p));
}

void flush_lines(const char* begin, const char* end) {
  for (const char* p = begin; p < end; p += kLine) _mm_clflush(p);
}

}  // namespace

void evict_from_caches(std::span<const kb_tensor> tensors) {
  static const bool optimized = cpu_has_clflushopt();
  for (const kb_tensor& t : tensors) {
    const auto bytes = static_cast<std::size_t>(kb_numel(&t)) * dtype_size(t.dtype);
    const auto first = reinterpret_cast<std::uintptr_t>(t.data) & ~(kLine - 1);
    const char* begin = reinterpret_cast<const char*>(first);
    const char* end = static_cast<const char*>(t.data) + bytes;
    if (optimized)
      flush_lines_opt(begin, end);
    else
      flush_lines(begin, end);
  }
  _mm_mfence();
}

void settle_before_call() {
  const timespec pause{0, static_cast<long>(kSettleMs * 1e6)};
  nanosleep(&pause, nullptr);
}

}  // namespace kbench
