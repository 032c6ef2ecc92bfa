// The candidates in tests/candidates/, most of them using the libraries the candidate command
// links (Highway, oneDNN, OpenBLAS, oneMKL where the build found it): each goes through the real
// `kbench eval` (fixed compile command, worker process, checker) and must get the verdict its first
// line promises: "// expect: <status> on <workload>".
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli_support.h"

namespace kbench::testing {
namespace {

std::vector<std::string> candidate_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("tests/candidates")))
    if (entry.path().extension() == ".cpp") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

struct Expectation {
  std::string status, workload;
  int threads = 1;
};

// "// expect: correct on 12p_RMSNorm" -> {correct, 12p_RMSNorm, 1}, with an optional " with N
// threads" at the end; empty fields when malformed.
Expectation expectation(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::string marker = "// expect: ", on = " on ", with = " with ";
  const std::size_t at = line.find(on);
  if (!line.starts_with(marker) || at == std::string::npos) return {};
  Expectation e{line.substr(marker.size(), at - marker.size()), line.substr(at + on.size())};
  if (const std::size_t threads_at = e.workload.find(with); threads_at != std::string::npos) {
    e.threads = std::atoi(e.workload.c_str() + threads_at + with.size());
    e.workload.resize(threads_at);
  }
  return e;
}

class LibraryCandidate : public ::testing::TestWithParam<std::string> {};

TEST_P(LibraryCandidate, CompilesUnderTheCandidateCommandAndGetsItsVerdict) {
  const std::string path = source_path("tests/candidates/" + GetParam());
  if (GetParam().starts_with("mkl_") && sizeof(KBENCH_MKL_RUNTIME) == 1)
    GTEST_SKIP()
        << "this build found no MKL (scripts/install-mkl.sh), so candidates cannot link it";
  const Expectation expected = expectation(path);
  ASSERT_FALSE(expected.status.empty())
      << path << " lacks a '// expect: <status> on <workload>' first line";
  const CliRun run =
      run_kbench("eval --workload " + expected.workload + " --size smoke --candidate " + path +
                 " --threads " + std::to_string(expected.threads) +
                 " --warmup 2 --iters 10 --json --db " + temp_db(GetParam()));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result["status"], expected.status) << "error: " << result["error"] << "\n"
                                               << result["diagnostics"];
  // Correct candidates pass inside the sandbox, not a weakened one: the seccomp filter is never
  // optional, and any layer this machine lacks is named.
  if (expected.status == "correct") {
    const std::vector<std::string> layers = result["sandbox"]["layers"];
    EXPECT_NE(std::find(layers.begin(), layers.end(), "seccomp"), layers.end())
        << result["sandbox"].dump();
    for (const std::string missing : result["sandbox"]["missing"])
      std::cout << "note: this machine's sandbox lacks " << missing << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Files, LibraryCandidate, ::testing::ValuesIn(candidate_files()),
                         [](const ::testing::TestParamInfo<std::string>& file) {
                           std::string name = file.param.substr(0, file.param.size() - 4);
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace kbench::testing
