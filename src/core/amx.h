// Intel AMX (Advanced Matrix Extensions) detection and the Linux tile-data permission, which a
// process must hold before its first tile instruction (without it, the first one raises SIGILL).
#pragma once

namespace kbench {

// True when the CPU reports the AMX-TILE and AMX-BF16 features (cpuid leaf 7, EDX bits 24 and 22):
// the hardware can run tdpbf16ps. Says nothing about the kernel; see request_amx_permission().
bool cpu_has_amx_bf16();

// Asks the kernel for the AMX tile-data state (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA),
// Linux 5.16+) and returns whether this process now holds it. The permission is process-wide and
// inherited by threads and children, so one call before any tile instruction suffices; repeated
// calls are harmless and return the first answer. False on CPUs without AMX, on older kernels, and
// where the kernel refuses (e.g. a signal stack too small for the enlarged register state).
bool request_amx_permission();

}  // namespace kbench
