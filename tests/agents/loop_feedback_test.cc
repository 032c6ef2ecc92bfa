// The loop analysis as a model reads it: the hottest loops first with their share, bound and the
// sample's own lines quoted; what could not be measured said, not invented.
#include "agents/loop_feedback.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kbench::agents {
namespace {

using nlohmann::json;

const std::string kCode =
    "#include \"kbench/kernel.h\"\n"                          // 1
    "static float sum_of_squares(const float* x, int n) {\n"  // 2
    "  float s = 0;\n"                                        // 3
    "  for (int i = 0; i < n; ++i)\n"                         // 4
    "    s += x[i] * x[i];\n"                                 // 5
    "  return s;\n"                                           // 6
    "}\n";                                                    // 7

json loop(double share, std::vector<int> lines, const std::string& bound) {
  return {{"function", "float (anonymous namespace)::sum_of_squares(float const*, int)"},
          {"lines", "cand.cpp:4-5"},
          {"candidate_lines", lines},
          {"vector_bits", 0},
          {"trips", 4096},
          {"cycles_per_iter", 4.02},
          {"block_rthroughput", 1.0},
          {"bound", bound},
          {"share", share},
          {"warnings", {"scalar code: no packed vector instruction"}}};
}

json counted_analysis() {
  return {{"model", "znver3"},
          {"clock_ghz", 2.9},
          {"trips_size", "smoke"},
          {"predicted_ms", 0.75},
          {"measured_ms", 1.0},
          {"loops",
           {loop(0.9, {4, 5}, "latency chain (registers)"), loop(0.095, {3}, "port Zn3FP1"),
            loop(0.005, {6}, "front end")}}};
}

TEST(LoopFeedback, TheHottestLoopsComeFirstWithTheirShareBoundAndOwnLines) {
  const std::string text = loop_feedback(counted_analysis().dump(), kCode);
  EXPECT_NE(text.find("model znver3 at 2.90 GHz"), std::string::npos) << text;
  EXPECT_NE(text.find("at smoke size"), std::string::npos) << text;
  EXPECT_NE(text.find("account for 0.75 ms of the 1 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("(75%)"), std::string::npos) << text;
  const std::size_t first =
      text.find("1. 90.0% of the loops' cycles: in sum_of_squares, lines 4-5");
  const std::size_t second = text.find("2. 9.5% of the loops' cycles: in sum_of_squares, line 3");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_NE(text.find("scalar, 4096 iterations per call, 4.02 cycles per iteration where its "
                      "ports alone allow 1.00; bound by latency chain (registers)"),
            std::string::npos)
      << text;
  // The sample's own lines, trimmed, under the loop they belong to.
  EXPECT_NE(text.find("   4: for (int i = 0; i < n; ++i)\n   5: s += x[i] * x[i];\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Warning: scalar code"), std::string::npos) << text;
  // Under 1% of the cycles: not where the next round's work is.
  EXPECT_EQ(text.find("3. "), std::string::npos) << text;
}

TEST(LoopFeedback, AtMostTopLoopsAreShown) {
  const std::string text = loop_feedback(counted_analysis().dump(), kCode, 1);
  EXPECT_NE(text.find("1. "), std::string::npos) << text;
  EXPECT_EQ(text.find("2. "), std::string::npos) << text;
}

TEST(LoopFeedback, UncountedLoopsAreListedInCodeOrderWithoutShares) {
  json a = counted_analysis();
  a["trips_size"] = nullptr;
  a["trips_error"] = "the instrumented build crashed\nsecond line";
  a["predicted_ms"] = nullptr;
  a["measured_ms"] = nullptr;
  a["clock_ghz"] = nullptr;
  for (json& l : a["loops"]) {
    l["trips"] = nullptr;
    l["share"] = nullptr;
  }
  const std::string text = loop_feedback(a.dump(), kCode);
  EXPECT_NE(text.find("in the order of the code"), std::string::npos) << text;
  EXPECT_NE(text.find("Iterations not counted: the instrumented build crashed\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("second line"), std::string::npos) << text;
  EXPECT_EQ(text.find("account for"), std::string::npos) << text;
  EXPECT_EQ(text.find("% of the loops' cycles"), std::string::npos) << text;
  EXPECT_EQ(text.find("iterations per call"), std::string::npos) << text;
  EXPECT_NE(text.find("3. in sum_of_squares, line 6"), std::string::npos) << text;
}

TEST(LoopFeedback, AFailedAnalysisIsOneLineAndNoneIsNothing) {
  EXPECT_EQ(loop_feedback(
                json{{"error", "the candidate does not compile:\nfoo.cpp:1: error"}}.dump(), kCode),
            "No loop analysis: the candidate does not compile:\n");
  EXPECT_EQ(loop_feedback("", kCode), "");
  EXPECT_EQ(loop_feedback("{not json", kCode), "");
}

TEST(LoopFeedback, LinesOutsideTheSourceOrOfOtherFilesAreNamedNotQuoted) {
  json a = counted_analysis();
  a["loops"][0]["candidate_lines"] = {99};
  a["loops"][1]["candidate_lines"] = json::array();
  const std::string text = loop_feedback(a.dump(), kCode);
  EXPECT_NE(text.find("line 99;"), std::string::npos) << text;
  EXPECT_EQ(text.find("   99:"), std::string::npos) << text;
  EXPECT_NE(text.find("in sum_of_squares, cand.cpp:4-5;"), std::string::npos) << text;
}

}  // namespace
}  // namespace kbench::agents
