// What kbench says about a named path that is no readable file, for every command that reads one.
#include "core/readable_file.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir_test.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using ReadableFile = testing::TempDirTest;

TEST_F(ReadableFile, AReadableRegularFileHasNoProblem) {
  const fs::path file = root() / "k.cpp";
  std::ofstream(file) << "int x;\n";
  EXPECT_EQ(why_not_readable_file(file), "");
  const fs::path link = root() / "link.cpp";
  fs::create_symlink(file, link);
  EXPECT_EQ(why_not_readable_file(link), "");
}

TEST_F(ReadableFile, NamesWhatThePathIsInstead) {
  EXPECT_EQ(why_not_readable_file(root() / "missing.cpp"), "no such file");
  EXPECT_EQ(why_not_readable_file(root()), "it is a directory");
  EXPECT_EQ(why_not_readable_file("/dev/null"), "it is not a regular file");
  const fs::path dangling = root() / "dangling.cpp";
  fs::create_symlink(root() / "gone.cpp", dangling);
  EXPECT_EQ(why_not_readable_file(dangling), "no such file");
}

TEST_F(ReadableFile, PassesOnTheErrorThatStoppedTheCheck) {
  // A path through a regular file: stat fails with ENOTDIR, which is not "no such file".
  const fs::path file = root() / "plain";
  std::ofstream(file) << "x";
  EXPECT_EQ(why_not_readable_file(file / "k.cpp"), "Not a directory");
}

}  // namespace
}  // namespace kbench
