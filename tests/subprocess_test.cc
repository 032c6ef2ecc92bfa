// run_command keeps both ends of a long output: a compiler's first error and a crash's last words.
#include "harness/subprocess.h"

#include <gtest/gtest.h>

namespace kbench {
namespace {

TEST(RunCommand, KeepsTheHeadAndTheTailOfALongOutputAndSaysWhatWasLeftOut) {
  const CommandResult r = run_command(
      {"sh", "-c", "echo 'first: error'; head -c 100000 /dev/zero | tr '\\0' x; echo 'last words'"},
      30, 1000);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.output.starts_with("first: error\n")) << r.output.substr(0, 40);
  EXPECT_TRUE(r.output.ends_with("last words\n"));
  EXPECT_NE(r.output.find("[... 99024 bytes of output left out ...]"), std::string::npos);
  EXPECT_LT(r.output.size(), 1100u);
}

TEST(RunCommand, KeepsAShortOutputWhole) {
  const CommandResult r = run_command({"sh", "-c", "printf 'one\\ntwo\\n'; exit 3"}, 30, 1000);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "one\ntwo\n");
}

}  // namespace
}  // namespace kbench
