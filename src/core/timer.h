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

#include <algorithm>
#include <chrono>
#include <cmath>

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

// Milliseconds per call of `calls` calls of `call` back to back, between one pair of clock reads.
// On one thread, the smaller of wall and CPU time: time another process held the core is not the
// call's.
template <class Call>
double timed_calls_ms(Call&& call, bool single_thread, int calls = 1) {
  const double wall0 = now_seconds(), cpu0 = thread_cpu_seconds();
  for (int i = 0; i < calls; ++i) call();
  double seconds = now_seconds() - wall0;
  if (single_thread) seconds = std::min(seconds, thread_cpu_seconds() - cpu0);
  return seconds * 1e3 / calls;
}

// The best time of one call of `call` run back to back, warm, in milliseconds: `batches` batches,
// each of as many calls as fill `min_batch_seconds`, each batch's time divided by its calls. Timing
// calls one at a time would count the clock reads once per call, and the CPU clock is a system
// call (measured 277 ns a read on a KVM guest against 35 ns for the wall clock): a sum of many
// microsecond calls, such as a library ceiling at small shapes, came out up to 10% above the
// baseline that makes the same calls. On one thread a batch counts the smaller of its wall and CPU
// time, leaving out time another process held the core.
template <class Call>
double best_back_to_back_ms(Call&& call, bool single_thread, int batches,
                            double min_batch_seconds = 2e-4) {
  const auto timed = [&](int calls) { return timed_calls_ms(call, single_thread, calls) * 1e-3; };
  const double first = timed(1);
  const int calls_per_batch =
      first >= min_batch_seconds
          ? 1
          : static_cast<int>(
                std::min(10000.0, std::ceil(min_batch_seconds / std::max(first, 1e-9))));
  double best = first;
  for (int batch = 0; batch < batches; ++batch) best = std::min(best, timed(calls_per_batch));
  return best * 1e3;
}

}  // namespace kbench
