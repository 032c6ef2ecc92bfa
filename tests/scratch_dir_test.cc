// ScratchDir: a private directory removed with its owner, or after a kill by the next one made
// under the same root, and never while its owner lives.
#include "core/scratch_dir.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>

#include <gtest/gtest.h>

#include "scratch_dir_support.h"
#include "temp_dir_test.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

using ScratchDirTest = testing::TempDirTest;

TEST_F(ScratchDirTest, IsPrivateNamedForItsPrefixAndGoesWithItsOwner) {
  fs::path path;
  {
    const ScratchDir a(root() / "made", "tool");
    const ScratchDir b(root() / "made", "tool");
    path = a.path();
    EXPECT_NE(a.path(), b.path());
    EXPECT_EQ(a.path().parent_path(), root() / "made");
    EXPECT_TRUE(a.path().filename().string().starts_with("tool-"));
    EXPECT_EQ(fs::status(a.path()).permissions() & fs::perms::all, fs::perms::owner_all);
    std::ofstream(a.path() / "file") << "x";
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(root() / "made"));
}

TEST_F(ScratchDirTest, AMovedDirectoryIsRemovedOnceByItsLastOwner) {
  ScratchDir first(root(), "tool");
  const fs::path path = first.path();
  {
    ScratchDir second = std::move(first);
    EXPECT_EQ(second.path(), path);
    EXPECT_TRUE(first.path().empty());
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(ScratchDirTest, AKilledOwnersDirectoryIsRemovedByTheNextAndALiveOnesKept) {
  const fs::path abandoned = testing::abandoned_scratch_dir(root(), "tool");
  std::ofstream(abandoned / "partial.so") << "partial";
  const fs::path other_prefix = testing::abandoned_scratch_dir(root(), "other");
  const ScratchDir live(root(), "tool");
  EXPECT_FALSE(fs::exists(abandoned)) << "a killed owner's directory stayed";
  EXPECT_TRUE(fs::exists(other_prefix)) << "another prefix's directory was taken";

  // A live owner in another process: a child holding its ScratchDir until told to go.
  int go[2], ready[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const ScratchDir held(root(), "held");
    char byte = 1;
    if (write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 1) _exit(1);
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  EXPECT_EQ(remove_abandoned_scratch(root(), "held"), 0);
  EXPECT_EQ(remove_abandoned_scratch(root(), "tool"), 0) << "this process's live one was taken";
  ASSERT_EQ(write(go[1], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(remove_abandoned_scratch(root(), "held"), 1);
  for (const int fd : {go[0], go[1], ready[0], ready[1]}) close(fd);
}

TEST_F(ScratchDirTest, TheCollectorFollowsNoLinkAndSkipsDirectoriesBeingMade) {
  const fs::path target = root() / "elsewhere";
  fs::create_directories(target);
  std::ofstream(target / "keep") << "x";
  fs::create_directory_symlink(target, root() / "tool-link");
  fs::create_directories(root() / ".tool-staging");  // a ScratchDir before it is locked and named
  EXPECT_EQ(remove_abandoned_scratch(root(), "tool"), 0);
  EXPECT_TRUE(fs::exists(target / "keep"));
  EXPECT_TRUE(fs::exists(root() / ".tool-staging"));
}

TEST_F(ScratchDirTest, AnUnusableRootIsAnErrorNamingIt) {
  const fs::path file = root() / "a-file";
  std::ofstream(file) << "x";
  try {
    ScratchDir dir(file, "tool");
    FAIL() << "made a directory under a file: " << dir.path();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kbench
