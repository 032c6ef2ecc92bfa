// run_command keeps both ends of a long output: a compiler's first error and a crash's last words.
#include "harness/subprocess.h"

#include <gtest/gtest.h>

namespace kbench {
namespace {

TEST(RunCommand, KeepsTheHeadAndTheTailOfALongOutputAndSaysWhatWasLeftOut) {
  const CommandResult r =
      run_command({"sh", "-c",
                   "echo 'first: error'; for i in $(seq 1000); do echo \"line $i\"; done; "
                   "echo 'last words'"},
                  30, 1000);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.output.starts_with("first: error\nline 1\nline 2\n")) << r.output.substr(0, 40);
  EXPECT_TRUE(r.output.ends_with("line 1000\nlast words\n"));
  EXPECT_NE(r.output.find(" bytes of output left out ...]\n"), std::string::npos);
  EXPECT_LE(r.output.size(), 1050u);
}

// A compiler given a binary file quotes it in lines of tens of kilobytes: each keeps its start
// and says how much was cut, so the errors after it still fit in the head.
TEST(RunCommand, AnEnormousLineKeepsItsStartAndLeavesRoomForTheLinesAfterIt) {
  const CommandResult r =
      run_command({"sh", "-c",
                   "echo 'first: error'; head -c 100000 /dev/zero | tr '\\0' x; "
                   "printf '\\nsecond: error\\n'; head -c 5000 /dev/zero | tr '\\0' y; "
                   "printf '\\nlast words\\n'"},
                  30, 1000);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.output.starts_with("first: error\n" + std::string(62, 'x') +
                                   " [... 99938 more bytes]\nsecond: error\n"))
      << r.output.substr(0, 200);
  EXPECT_TRUE(r.output.ends_with("yyy\nlast words\n"));
  EXPECT_LE(r.output.size(), 1050u);
}

TEST(RunCommand, KeepsAShortOutputWhole) {
  const CommandResult r = run_command({"sh", "-c", "printf 'one\\ntwo\\n'; exit 3"}, 30, 1000);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "one\ntwo\n");
}

}  // namespace
}  // namespace kbench
