// The wall clock kbench times kernels with.
//
// Timing is taken in the parent (evaluator) process around one request/response exchange with the
// worker process that runs the kernel, so the clock only needs to be monotonic and cheap, not
// serializing: the round trip through the pipe already orders the two reads around the call.
//
// std::chrono::steady_clock is CLOCK_MONOTONIC on Linux (libstdc++ and libc++ both), which
//  - never jumps with NTP or settimeofday, unlike CLOCK_REALTIME / system_clock;
//  - is served from the vDSO without a system call, costing ~20-50 ns per read, negligible next to
//    the microseconds of a pipe round trip and the milliseconds of a typical kernel call;
//  - has nanosecond resolution where the TSC is invariant, as on every x86 server kbench targets.
// Raw RDTSC would be cheaper still but counts reference cycles, needs calibration against a clock
// anyway and buys nothing at these durations.
#pragma once

#include <time.h>

#include <chrono>

namespace kbench {

// Seconds since an arbitrary fixed point (boot); only differences are meaningful.
inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds the calling thread has run: on one thread, a call's min(wall, CPU) leaves out the
// time another process held the core.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace kbench
