// Every hostile or sloppy candidate in tests/adversarial/ goes through the real `kbench eval`
// (compiler, worker process, checker) and must get the verdict its first line promises, with kbench
// exiting 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_support.h"

namespace kbench::testing {
namespace {

std::vector<std::string> adversarial_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("tests/adversarial")))
    if (entry.path().extension() == ".cpp") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string expected_status(const std::string& path) {
  std::ifstream in(path);
  std::string first_line;
  std::getline(in, first_line);
  const std::string marker = "// expect: ";
  return first_line.starts_with(marker) ? first_line.substr(marker.size()) : "";
}

class AdversarialCandidate : public ::testing::TestWithParam<std::string> {};

TEST_P(AdversarialCandidate, GetsItsExpectedVerdict) {
  const std::string path = source_path("tests/adversarial/" + GetParam());
  const std::string expected = expected_status(path);
  ASSERT_FALSE(expected.empty()) << path << " lacks a '// expect: <status>' first line";
  const CliRun run = run_kbench("eval --workload 12p_RMSNorm --size smoke --candidate " + path +
                                " --timeout-s 2 --warmup 2 --iters 10 --max-iters 10 --json --db " +
                                temp_db(GetParam()));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto result = nlohmann::json::parse(run.out);
  EXPECT_EQ(result["status"], expected) << "error: " << result["error"] << "\n"
                                        << result["diagnostics"];
  if (expected == "correct") {
    EXPECT_TRUE(result["correctness"]["passed"].get<bool>());
    EXPECT_EQ(result["candidate"]["iters"], 10);
  } else {
    EXPECT_FALSE(result["error"].get<std::string>().empty());
    EXPECT_TRUE(result["candidate"].is_null()) << "timing is reported only for correct candidates";
  }
}

INSTANTIATE_TEST_SUITE_P(Files, AdversarialCandidate, ::testing::ValuesIn(adversarial_files()),
                         [](const ::testing::TestParamInfo<std::string>& file) {
                           std::string name = file.param.substr(0, file.param.size() - 4);
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace kbench::testing
