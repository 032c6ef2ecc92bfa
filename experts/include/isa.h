// What every expert's paths share: the instruction sets they are written for and the one switch
// that picks among them (Isa ordered by capability, best_isa() for this CPU, one override for
// tests, KB_MAX_ISA), the target attributes of the vector paths, and one aligned scratch buffer.
#pragma once

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>

// Testing only: the most capable path an expert may take (0 scalar, 1 AVX2, 2 AVX-512, 3 AMX), so
// the slower paths can be checked on a machine that has the faster ones.
#ifndef KB_MAX_ISA
#define KB_MAX_ISA 3
#endif

#define KB_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define KB_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#define KB_TARGET_AMX __attribute__((target("amx-tile,amx-bf16")))
// The AVX-512 work of an AMX path: every AMX CPU also has AVX512-BF16 (best_isa checks it).
#define KB_TARGET_AVX512_BF16 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,avx512bf16")))

namespace isa {

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAmx = 3 };

inline bool cpu_has_amx_bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (edx & (1u << 22)) && (edx & (1u << 24));  // AMX-BF16, AMX-TILE
}

// Linux 5.16+ grants the tile-data state (XFEATURE_XTILEDATA = 18) only on request; the first
// tile instruction without it is SIGILL. kbench's worker has asked already; asking again is
// harmless, and the granted mask is checked, not assumed.
inline bool amx_permitted() {
  constexpr long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023;
  constexpr int kXtileData = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXtileData) != 0) return false;
  unsigned long mask = 0;
  return syscall(SYS_arch_prctl, kArchGetXcompPerm, &mask) == 0 && (mask & (1ul << kXtileData));
}

// The most capable ISA this CPU allows, at most `highest` (the best the expert implements) and
// KB_MAX_ISA. AMX needs the cpuid bits, AVX512-BF16 (which every AMX CPU has; the AMX paths round
// with it) and the kernel's grant of the tile state; a test's software model of the tile
// instructions and of that rounding (KB_AMX_MODEL) stands in for all three, its epilogue still
// AVX-512.
inline Isa best_isa(Isa highest) {
  __builtin_cpu_init();
  const int cap = std::min(KB_MAX_ISA, static_cast<int>(highest));
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#ifdef KB_AMX_MODEL
  const bool amx = avx512;
#else
  const bool amx =
      avx512 && __builtin_cpu_supports("avx512bf16") && cpu_has_amx_bf16() && amx_permitted();
#endif
  if (cap >= static_cast<int>(Isa::kAmx) && amx) return Isa::kAmx;
  if (cap >= static_cast<int>(Isa::kAvx512) && avx512) return Isa::kAvx512;
  if (cap >= static_cast<int>(Isa::kAvx2) && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma"))
    return Isa::kAvx2;
  return Isa::kScalar;
}

}  // namespace isa

// A grow-only, 64-byte aligned scratch area: packed operands and partial state only, never results
// across calls. Kept per call site or per thread, so a call does not fault in fresh pages; kb_run
// is not called concurrently, so a static one is safe.
class AlignedBuffer {
 public:
  template <typename T = float>
  T* get(std::int64_t count) {
    const size_t bytes = (static_cast<size_t>(count) * sizeof(T) + 63) / 64 * 64;
    if (bytes > size_) {
      mem_.reset(static_cast<char*>(std::aligned_alloc(64, bytes)));
      size_ = mem_ ? bytes : 0;
    }
    return reinterpret_cast<T*>(mem_.get());
  }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<char[], Free> mem_;
  size_t size_ = 0;
};
