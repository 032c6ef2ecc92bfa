// What the Linux scheduler says about a worker and its CPUs, read by kbench from /proc (never
// reported by the untrusted worker itself): per-thread on-CPU time and run-queue wait
// (/proc/<pid>/task/<tid>/schedstat) and per-CPU steal time (/proc/stat).
//
// Why these two sources:
//  - schedstat is in nanoseconds and kept per thread by the scheduler; field 1 is the time the
//    thread ran, field 2 the time it sat runnable on a run queue while something else ran. Both are
//    exact enough to judge one 1 ms call. They need CONFIG_SCHED_INFO (every distribution kernel);
//    without it the readers return nothing and calls are judged by wall time alone.
//  - System-wide per-CPU run time (/proc/schedstat) would separate "others ran on my CPU" from
//    "my own threads competed", but it needs CONFIG_SCHEDSTATS, which the VMs kbench targets often
//    lack; /proc/stat's per-CPU counters are always there but count 10 ms ticks, so they serve for
//    the whole timing phase (steal time), not for single calls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace kbench {

// One thread's counters from /proc/<pid>/task/<tid>/schedstat.
struct TaskSchedstat {
  std::int64_t tid = 0;
  std::uint64_t run_ns = 0;   // time on a CPU
  std::uint64_t wait_ns = 0;  // time runnable but waiting on a run queue
};

// Parses "run_ns wait_ns timeslices\n"; nullopt when the text is not three unsigned numbers.
std::optional<TaskSchedstat> parse_schedstat(std::string_view text);

// Every thread of `pid` at this instant (threads that exit between listing and reading are
// skipped). Empty when /proc has no schedstat (kernel without CONFIG_SCHED_INFO) or `pid` is gone.
std::vector<TaskSchedstat> read_task_schedstats(pid_t pid);

// The scheduler state letter of a /proc/<pid>/task/<tid>/stat line ('R', 'S', 'T', ...), the
// first field after the command name, which is parenthesised and may itself hold ") ";
// nullopt when the text has no such field.
std::optional<char> parse_stat_state(std::string_view text);

// A thread of `pid` that is neither stopped ('T', 't') nor ending ('Z', 'X'), with its state;
// nullopt when every thread is, or `pid` is gone.
struct ThreadState {
  std::int64_t tid = 0;
  char state = '?';
};
std::optional<ThreadState> first_unstopped_thread(pid_t pid);

// A thread that ran less than this in a call did no work in it, and its run-queue wait is not the
// call's. Thawing a stopped process makes every thread runnable, the idle ones too (a library's
// sleeping pool thread must run to go back to sleep): at as many threads as CPUs such a thread
// sits runnable behind the working ones for most of the call, and its wait marked every call
// disturbed (every call of every baseline at two threads on two CPUs). A working thread kept off
// its CPU still counts; one starved outright shows as its siblings' off-CPU time.
constexpr std::uint64_t kIdleThreadRunNs = 50'000;

// What a worker's threads did between two snapshots of read_task_schedstats.
struct SchedDelta {
  bool valid = false;  // both snapshots had data
  double run_s = 0;    // summed over threads
  double wait_s = 0;   // summed over the threads that ran at least kIdleThreadRunNs
  // The thread that ran longest, the critical path of most kernels (the main thread of a serial or
  // OpenMP kernel, the busiest pool thread of one whose main thread only waits for a pool).
  double busiest_run_s = 0, busiest_wait_s = 0;
};
// Threads absent from `before` started in between and count from zero; threads absent from `after`
// ended in between and their last interval is lost (a kernel that starts and ends threads within
// one call is under-counted, never over-counted).
SchedDelta sched_delta(const std::vector<TaskSchedstat>& before,
                       const std::vector<TaskSchedstat>& after);

// One CPU's line of /proc/stat, in USER_HZ ticks.
struct CpuTicks {
  std::uint64_t total = 0;  // user + nice + system + idle + iowait + irq + softirq + steal
  std::uint64_t steal = 0;  // time the hypervisor ran something else on this virtual CPU
};

// The "cpuN ..." lines of /proc/stat's text, by CPU number; the aggregate "cpu" line is skipped.
// Guest time is already inside user/nice and is not added again. Kernels before 2.6.11 have no
// steal column: it reads as 0.
std::map<int, CpuTicks> parse_proc_stat(std::string_view text);

// parse_proc_stat of the live /proc/stat; empty when it cannot be read.
std::map<int, CpuTicks> read_proc_stat();

// Steal time as a percentage of all time of `cpus` between two /proc/stat snapshots; 0 when no
// time passed or the CPUs are missing.
double steal_percent(const std::map<int, CpuTicks>& before, const std::map<int, CpuTicks>& after,
                     const std::vector<int>& cpus);

}  // namespace kbench
