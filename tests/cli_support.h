// Helpers for tests that drive the real kbench executable: run it, capture stdout, parse JSON.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/environment.h"

namespace kbench::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout (stderr goes to the test log)
};

inline std::string kbench_exe() {
  return std::string(KBENCH_BINARY_DIR) + "/src/kbench";
}
inline std::string source_path(const std::string& relative) {
  return std::string(KBENCH_SOURCE_DIR) + "/" + relative;
}

// Copies the machine's figures, where kbench measured them already, into the cache at `cache`
// (created if missing), so that a kbench using that cache need not measure them again (~20 s).
inline void seed_machine_cache(const std::filesystem::path& cache) {
  std::error_code ec;
  std::filesystem::create_directories(cache, ec);
  const std::filesystem::path machine = std::filesystem::path(kbench_cache_dir()) / "machine";
  if (std::filesystem::is_directory(machine, ec))
    std::filesystem::copy(machine, cache / "machine", std::filesystem::copy_options::recursive, ec);
}

// A database private to the calling test, so parallel CTest runs never share one.
inline std::string temp_db(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "kbench-tests";
  std::filesystem::create_directories(dir);
  return (dir / (name + "-" + std::to_string(::getpid()) + ".db")).string();
}

// Runs the shell command `cmd`, capturing its stdout.
inline CliRun run_shell(const std::string& cmd) {
  CliRun r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CliRun run_kbench(const std::string& args) {
  return run_shell(kbench_exe() + " " + args);
}

// Runs kbench and captures its stderr alone (stdout discarded).
inline CliRun run_kbench_stderr(const std::string& args) {
  return run_shell(kbench_exe() + " " + args + " 2>&1 1>/dev/null");
}

}  // namespace kbench::testing
