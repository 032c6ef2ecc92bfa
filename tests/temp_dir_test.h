// A test with a directory of its own beneath the test process's temporary directory
// (test_main.cc), removed when the test ends.
#pragma once

#include <filesystem>

#include <gtest/gtest.h>

#include "core/scratch_dir.h"

namespace kbench::testing {

class TempDirTest : public ::testing::Test {
 protected:
  TempDirTest() : dir_(std::filesystem::temp_directory_path(), "test") {}
  const std::filesystem::path& root() const { return dir_.path(); }

 private:
  ScratchDir dir_;
};

}  // namespace kbench::testing
