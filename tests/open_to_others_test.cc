// first_path_closed_to_others: which path keeps a user of no account from a file or a tree, as the
// build's own user (harness/confined_command.h) would meet it.
#include "harness/open_to_others.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir_test.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

// A tree open to others beneath this test's own directory, which is opened too (it is made 0700).
class OpenToOthers : public testing::TempDirTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(chmod(root().c_str(), 0755), 0);
    tree_ = root() / "tree";
    fs::create_directories(tree_ / "sub");
    std::ofstream(tree_ / "sub" / "header.h") << "// header\n";
    std::ofstream(tree_ / "tool") << "#!/bin/sh\n";
    set_mode(tree_, 0755);
    set_mode(tree_ / "sub", 0755);
    set_mode(tree_ / "sub" / "header.h", 0644);
    set_mode(tree_ / "tool", 0755);
  }
  static void set_mode(const fs::path& path, mode_t mode) {
    ASSERT_EQ(chmod(path.c_str(), mode), 0) << path;
  }

  fs::path tree_;
};

TEST_F(OpenToOthers, AnOpenTreeHasNoClosedPath) {
  EXPECT_EQ(first_path_closed_to_others(tree_, true), "");
  EXPECT_EQ(first_path_closed_to_others(tree_ / "sub" / "header.h", false), "");
  EXPECT_EQ(first_path_closed_to_others(tree_ / "absent", true), "") << "nothing there to read";
}

TEST_F(OpenToOthers, ADirectoryAboveThatOthersCannotSearchIsNamed) {
  set_mode(tree_, 0750);
  EXPECT_EQ(first_path_closed_to_others(tree_ / "sub" / "header.h", false), tree_.string());
  set_mode(tree_, 0711);  // searchable, not listable: enough to reach a file below it
  EXPECT_EQ(first_path_closed_to_others(tree_ / "sub" / "header.h", false), "");
  EXPECT_EQ(first_path_closed_to_others(tree_, false), tree_.string()) << "a tree must be listable";
}

TEST_F(OpenToOthers, AFileOnlyItsOwnerReadsIsNamed) {
  set_mode(tree_ / "sub" / "header.h", 0600);
  EXPECT_EQ(first_path_closed_to_others(tree_ / "sub" / "header.h", false),
            (tree_ / "sub" / "header.h").string());
  set_mode(tree_ / "sub" / "header.h", 0644);
  set_mode(tree_ / "tool", 0744);  // its owner may run it, others only read it
  EXPECT_EQ(first_path_closed_to_others(tree_ / "tool", false), (tree_ / "tool").string());
}

TEST_F(OpenToOthers, AWholeTreeIsCheckedOnlyWhenAsked) {
  set_mode(tree_ / "sub" / "header.h", 0600);
  EXPECT_EQ(first_path_closed_to_others(tree_, false), "");
  EXPECT_EQ(first_path_closed_to_others(tree_, true), (tree_ / "sub" / "header.h").string());
}

TEST_F(OpenToOthers, ALinkIsFollowedToItsTarget) {
  const fs::path hidden = root() / "hidden";
  fs::create_directory(hidden);
  std::ofstream(hidden / "key") << "key\n";
  set_mode(hidden / "key", 0644);
  set_mode(hidden, 0700);
  fs::create_symlink(hidden / "key", tree_ / "link");
  EXPECT_EQ(first_path_closed_to_others(tree_ / "link", false), hidden.string());
  EXPECT_EQ(first_path_closed_to_others(tree_, true), hidden.string()) << "a link within the tree";
  set_mode(hidden, 0755);
  EXPECT_EQ(first_path_closed_to_others(tree_, true), "");
}

}  // namespace
}  // namespace kbench
