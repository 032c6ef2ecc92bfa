// AMX detection from cpuid and the tile-data permission through arch_prctl.
#include "core/amx.h"

#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace kbench {
namespace {

// From the kernel's arch/x86/include/uapi/asm/prctl.h and fpu/types.h; spelled out so kbench builds
// against kernel headers older than 5.16.
constexpr long kArchGetXcompPerm = 0x1022;
constexpr long kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;  // the XSAVE component holding the eight tile registers

}  // namespace

bool cpu_has_amx_bf16() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;
  return (edx & kAmxBf16) && (edx & kAmxTile);
#else
  return false;
#endif
}

bool request_amx_permission() {
#if defined(__x86_64__) && defined(SYS_arch_prctl)
  // Thread-safe one-time initialization; the kernel's answer cannot change for this process.
  static const bool granted = [] {
    if (!cpu_has_amx_bf16()) return false;
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
    unsigned long permitted = 0;
    if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &permitted) != 0) return false;
    return (permitted & (1ul << kXfeatureXtiledata)) != 0;
  }();
  return granted;
#else
  return false;
#endif
}

}  // namespace kbench
