// Cache eviction with clflushopt (clflush where the CPU lacks it), the warming read pass and the
// settling spin.
#include "harness/call_preamble.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>

#include "core/tensor.h"
#include "core/timer.h"

namespace kbench {
namespace {

constexpr std::size_t kLine = 64;

std::size_t bytes_of(const kb_tensor& t) {
  return static_cast<std::size_t>(kb_numel(&t)) * dtype_size(t.dtype);
}

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

bool cpu_has_clwb() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 24)) != 0;
}

__attribute__((target("clwb"))) void write_back_lines(const char* begin, const char* end) {
  for (const char* p = begin; p < end; p += kLine) _mm_clwb(const_cast<char*>(p));
}

// Calls `lines(begin, end)` on each tensor's data, rounded out to whole cache lines, then fences.
template <typename Lines>
void for_each_line_range(std::span<const kb_tensor> tensors, Lines lines) {
  for (const kb_tensor& t : tensors) {
    const auto first = reinterpret_cast<std::uintptr_t>(t.data) & ~(kLine - 1);
    lines(reinterpret_cast<const char*>(first), static_cast<const char*>(t.data) + bytes_of(t));
  }
  _mm_mfence();
}

}  // namespace

void evict_from_caches(std::span<const kb_tensor> tensors) {
  static const bool optimized = cpu_has_clflushopt();
  for_each_line_range(tensors, optimized ? flush_lines_opt : flush_lines);
}

void write_back(std::span<const kb_tensor> tensors) {
  static const bool keep = cpu_has_clwb();
  if (!keep) return evict_from_caches(tensors);
  for_each_line_range(tensors, write_back_lines);
}

void touch_for_reading(std::span<const kb_tensor> tensors) {
  std::uint64_t sum = 0;
  for (const kb_tensor& t : tensors) {
    const auto* bytes = static_cast<const unsigned char*>(t.data);
    const std::size_t n = bytes_of(t);
    for (std::size_t offset = 0; offset < n; offset += kLine) sum += bytes[offset];
  }
  // Keeps the loads: their only effect is on the caches.
  asm volatile("" : : "r"(sum) : "memory");
}

void settled_call_preamble(SharedTensors& own, std::span<const kb_tensor> inputs,
                           const SharedTensors* other) {
  if (other) evict_from_caches(other->views());
  own.poison();
  touch_for_reading(inputs);
  const double start_at = now_seconds() + kSettleMs * 1e-3;
  while (now_seconds() < start_at) _mm_pause();
}

}  // namespace kbench
