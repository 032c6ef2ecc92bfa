// The facts about the machine and build that every recorded result carries, read once per process.
#pragma once

#include <string>

namespace kbench {

struct Environment {
  std::string cpu_model;  // /proc/cpuinfo "model name"
  std::string
      cpu_flags;  // the ISA flags kbench cares about (avx2, fma, avx512*, amx*), space-separated
  int logical_cpus = 0;
  // CPU 0's cache sizes (cpu_caches.h), part of machine_id() only: hypervisors mask the model
  // name, and two CPU generations with the same flags differ here.
  std::string cpu_caches;
  std::string hostname;
  std::string compiler;            // `c++ --version` first line of the candidate compiler
  std::string libraries;           // OpenBLAS config string, Highway version, SQLite version
  std::string kbench_commit;       // git describe at configure time
  std::string build_type;          // "Release", sanitizers, -march=native
  std::string machine_id() const;  // stable key for per-machine caches: model, flags, cpus, caches
};

// Reads the environment of this process (cached after the first call). kbench_commit and build_type
// are whatever set_kbench_build_info() last recorded ("unknown" before that).
const Environment& current_environment();

// Records the build facts only the executable knows (CMake passes the git commit to the harness
// target, not to kbench_core). Call once at startup, before other threads read the environment.
void set_kbench_build_info(std::string commit, std::string build_type);

// True when /proc/cpuinfo lists `flag` (e.g. "avx512f").
bool cpu_has(const std::string& flag);

// Number of CPUs in a sysfs cpu list such as "0-7,64-71" (shared_cpu_list, cpus_allowed_list).
int count_cpu_list(const std::string& list);

// $HOME, or the passwd entry's home where $HOME is unset (cron jobs, some containers); empty when
// neither knows.
std::string home_directory();

// Where kbench keeps what it can rebuild (compiled candidates, the machine cache): $KBENCH_CACHE,
// else $XDG_CACHE_HOME/kbench, else ~/.cache/kbench (else /tmp/.cache/kbench without a home).
std::string kbench_cache_dir();

// The current UTC time as "2026-12-02T07:40:00Z", the form every record and cache entry carries.
std::string utc_now_iso8601();

}  // namespace kbench
