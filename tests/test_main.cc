// The main of every test executable: GoogleTest's, run in a temporary directory of the process's
// own. Tests, and the kbench processes they start, put their files beneath temp_directory_path();
// TMPDIR points it at a ScratchDir that goes with the process, or, when a timeout killed the
// process, with the next test executable's start. Without it each run of the suite left its
// databases, exports and caches in /tmp.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/scratch_dir.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // One root per user: a root another user made is not this one's to write.
  const kbench::ScratchDir temp(
      std::filesystem::temp_directory_path() / ("kbench-tests-" + std::to_string(geteuid())),
      "run");
  // As /tmp: tests that drop to another user (the worker's, the non-root build) write here too.
  std::filesystem::permissions(temp.path(),
                               std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  setenv("TMPDIR", temp.path().c_str(), 1);
  return RUN_ALL_TESTS();
}
