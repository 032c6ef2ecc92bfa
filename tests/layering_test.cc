// The layers of src/, bottom up: core, ops, workloads, probe, harness, store and analysis; experts,
// agents and sweep; cli. A file may include headers of its own folder and of the layers below it,
// never above: the store once included an agents header while the agents included the store, and
// each library's CMake target links only what sits below it.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <gtest/gtest.h>

namespace kbench {
namespace {

const std::map<std::string, int> kLayers = {
    {"core", 0},     {"ops", 1},     {"workloads", 2}, {"probe", 3}, {"harness", 4}, {"store", 5},
    {"analysis", 5}, {"experts", 6}, {"agents", 6},    {"sweep", 6}, {"cli", 7},
};

TEST(Layering, NoFileIncludesAHeaderOfAHigherLayerOrASibling) {
  const std::filesystem::path src = std::filesystem::path(KBENCH_SOURCE_DIR) / "src";
  const std::regex include(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    const std::filesystem::path relative = std::filesystem::relative(entry.path(), src);
    if (!entry.is_regular_file() || relative.parent_path().empty()) continue;  // CMakeLists.txt
    const std::string folder = relative.begin()->string();
    const auto own = kLayers.find(folder);
    ASSERT_TRUE(own != kLayers.end()) << "src/" << folder << " has no layer: add it to kLayers";
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch match;
      if (!std::regex_search(line, match, include)) continue;
      const auto included = kLayers.find(match[1].str());
      if (included == kLayers.end() || included->first == folder) continue;
      EXPECT_LT(included->second, own->second)
          << entry.path().string() << ":" << number << " (" << folder << ") includes "
          << match[1].str() << "/, which is not below it";
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace kbench
