// The candidates in tests/candidates/ use the libraries the candidate command links (Highway,
// oneDNN); each goes through the real `kbench eval` (fixed compile command, worker process,
// checker) and must get the verdict its first line promises: "// expect: <status> on <workload>".
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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
};

// "// expect: correct on 12p_RMSNorm" -> {correct, 12p_RMSNorm}; empty fields when malformed.
Expectation expectation(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::string marker = "// expect: ", on = " on ";
  const std::size_t at = line.find(on);
  if (!line.starts_with(marker) || at == std::string::npos) return {};
  return {line.substr(marker.size(), at - marker.size()), line.substr(at + on.size())};
}

class LibraryCandidate : public ::testing::TestWithParam<std::string> {};

TEST_P(LibraryCandidate, CompilesUnderTheCandidateCommandAndGetsItsVerdict) {
  const std::string path = source_path("tests/candidates/" + GetParam());
  const Expectation expected = expectation(path);
  ASSERT_FALSE(expected.status.empty())
      << path << " lacks a '// expect: <status> on <workload>' first line";
  const CliRun run =
      run_kbench("eval --workload " + expected.workload + " --size smoke --candidate " + path +
                 " --warmup 2 --iters 10 --json --db " + temp_db(GetParam()));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result["status"], expected.status) << "error: " << result["error"] << "\n"
                                               << result["diagnostics"];
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
