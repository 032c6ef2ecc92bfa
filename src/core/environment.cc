// Reads the CPU, host, compiler and library facts recorded with every result, from /proc and the
// linked libraries themselves.
#include "core/environment.h"

#include <pwd.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "core/cpu_caches.h"
#include "core/mkl_runtime.h"
#include "core/sha256.h"
#include "core/text.h"

#if __has_include(<hwy/highway.h>)
#include <hwy/highway.h>  // only for HWY_MAJOR/MINOR/PATCH, which hwy/base.h does not define
#endif

// Weak references: kbench_core does not link OpenBLAS or SQLite, but the executables that record
// results do (through kbench_workloads and kbench_store). A weak undefined symbol resolves to null
// when the library is absent, so core stays usable on its own and reports what is really loaded,
// which may differ from the headers it was compiled against.
extern "C" char* openblas_get_config(void) __attribute__((weak));
extern "C" const char* sqlite3_libversion(void) __attribute__((weak));

namespace kbench {
namespace {

// The ISA features that decide which kernels can run and which roofline applies, in the order they
// are reported. Names as the Linux kernel spells them in /proc/cpuinfo.
constexpr std::array<std::string_view, 14> kFlagsOfInterest = {
    "sse4_2",   "avx",         "avx2",        "fma",         "f16c",     "avx512f",  "avx512bw",
    "avx512vl", "avx512_bf16", "avx512_fp16", "avx512_vnni", "amx_tile", "amx_bf16", "amx_int8"};

struct CpuInfo {
  std::string model = "unknown";
  std::set<std::string, std::less<>> flags;
};

// The first processor's "model name" and "flags": kbench assumes every core has the same ISA, as on
// servers and on hybrid P/E-core parts, which expose one common instruction set.
CpuInfo read_cpuinfo() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  bool have_model = false, have_flags = false;
  for (std::string line; (!have_model || !have_flags) && std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(std::string_view(line).substr(0, colon));
    const std::string_view value = std::string_view(line).substr(colon + 1);
    if (key == "model name" && !have_model) {
      info.model = trim(value);
      have_model = true;
    } else if (key == "flags" && !have_flags) {
      std::istringstream words{std::string(value)};
      for (std::string flag; words >> flag;) info.flags.insert(flag);
      have_flags = true;
    }
  }
  return info;
}

const CpuInfo& cpuinfo() {
  static const CpuInfo info = read_cpuinfo();
  return info;
}

// First line of `c++ --version`: the compiler candidates are built with (the harness compiles them
// with `c++` from PATH), which need not be the one that built kbench.
std::string compiler_version() {
  FILE* pipe = popen("c++ --version 2>/dev/null", "r");
  if (!pipe) return "unknown";
  std::array<char, 512> buf{};
  const bool got = std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr;
  pclose(pipe);
  const std::string line = got ? trim(buf.data()) : "";
  return line.empty() ? "unknown" : line;
}

std::string library_versions() {
  std::string libs = openblas_get_config ? trim(openblas_get_config()) : "OpenBLAS not linked";
#ifdef HWY_MAJOR
  libs += "; Highway " + std::to_string(HWY_MAJOR) + "." + std::to_string(HWY_MINOR) + "." +
          std::to_string(HWY_PATCH);
#else
  libs += "; Highway headers not found";
#endif
  libs += "; " + mkl::status();
  libs +=
      sqlite3_libversion ? std::string("; SQLite ") + sqlite3_libversion() : "; SQLite not linked";
  return libs;
}

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

Environment read_environment() {
  Environment env;
  const CpuInfo& cpu = cpuinfo();
  env.cpu_model = cpu.model;
  for (std::string_view flag : kFlagsOfInterest) {
    if (!cpu.flags.contains(flag)) continue;
    if (!env.cpu_flags.empty()) env.cpu_flags += ' ';
    env.cpu_flags += flag;
  }
  // Online CPUs of the machine, not this process's affinity mask: the record describes the machine,
  // and the thread count of a run is stored with the run.
  env.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  env.cpu_caches = kbench::cpu_caches().sizes();
  env.hostname = host_name();
  env.compiler = compiler_version();
  env.libraries = library_versions();
  env.kbench_commit = "unknown";  // until the harness registers its build (build_info.h)
  env.build_type = "unknown";
  return env;
}

Environment& environment_storage() {
  static Environment env = read_environment();
  return env;
}

}  // namespace

std::string Environment::machine_id() const {
  // Model, ISA flags, CPU count and caches decide kernel speed and which code paths run; hostname
  // is left out so identical machines share tuning caches and peaks.
  const std::string key =
      cpu_model + '\n' + cpu_flags + '\n' + std::to_string(logical_cpus) + '\n' + cpu_caches;
  return sha256_hex(key).substr(0, 16);
}

const Environment& current_environment() {
  return environment_storage();
}

void set_kbench_build_info(std::string commit, std::string build_type) {
  Environment& env = environment_storage();
  env.kbench_commit = std::move(commit);
  env.build_type = std::move(build_type);
}

bool cpu_has(const std::string& flag) {
  return cpuinfo().flags.contains(flag);
}

int count_cpu_list(const std::string& list) {
  int count = 0;
  std::istringstream ranges(list);
  for (std::string range; std::getline(ranges, range, ',');) {
    int lo = 0, hi = 0;
    const int fields = std::sscanf(range.c_str(), "%d-%d", &lo, &hi);
    if (fields == 1) count += 1;
    if (fields == 2 && hi >= lo) count += hi - lo + 1;
  }
  return count;
}

std::string home_directory() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  std::array<char, 4096> buffer{};
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found &&
      found->pw_dir && *found->pw_dir) {
    return found->pw_dir;
  }
  return "";
}

std::string kbench_cache_dir() {
  if (const char* dir = std::getenv("KBENCH_CACHE"); dir && *dir) return dir;
  // The XDG spec says to ignore relative values.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return std::string(xdg) + "/kbench";
  const std::string home = home_directory();
  return (home.empty() ? std::string("/tmp") : home) + "/.cache/kbench";
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace kbench
