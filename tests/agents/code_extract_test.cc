// Reply parsing: which block is taken, which signatures pass, and the reasons given otherwise.
#include "agents/code_extract.h"

#include <gtest/gtest.h>

namespace kbench::agents {
namespace {

const char* kGood =
    "#include \"kbench/kernel.h\"\n"
    "extern \"C\" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,\n"
    "                      kb_tensor* outputs, int32_t num_outputs) {\n  return 0;\n}\n";

TEST(CodeExtractTest, TakesTheLastFencedBlockThatMentionsKbRun) {
  const std::string reply = std::string("Here is a sketch:\n```cpp\nint kb_run_sketch;\n```\n") +
                            "Final:\n```c++\n" + kGood + "```\nAnd a test:\n```\nmain() {}\n```\n";
  const ExtractedCode code = extract_candidate(reply);
  ASSERT_TRUE(code.ok) << code.reason;
  EXPECT_EQ(code.code, kGood);
}

TEST(CodeExtractTest, AcceptsRenamedParametersEastConstIntAndNoNames) {
  for (const std::string params :
       {"kb_config const *c, kb_tensor const* in, int n_in, kb_tensor *out, int n_out",
        "const kb_config*, const kb_tensor*, int32_t, kb_tensor*, int32_t",
        "const kb_config * cfg,\n const kb_tensor * inputs,\n int32_t num_inputs,\n kb_tensor * "
        "outputs,\n int32_t num_outputs"}) {
    const std::string reply = "```cpp\nextern \"C\" int kb_run(" + params + ") { return 0; }\n```";
    const ExtractedCode code = extract_candidate(reply);
    EXPECT_TRUE(code.ok) << params << ": " << code.reason;
    // The ABI header is added when the block lacks it: its declaration gives kb_run C linkage.
    EXPECT_EQ(code.code.rfind("#include \"kbench/kernel.h\"\n", 0), 0u);
  }
}

TEST(CodeExtractTest, AnUnterminatedFenceStillYieldsItsCode) {
  const ExtractedCode code = extract_candidate(std::string("```cpp\n") + kGood);
  ASSERT_TRUE(code.ok) << code.reason;
  EXPECT_EQ(code.code, kGood);
}

TEST(CodeExtractTest, AnUnfencedReplyThatDefinesKbRunIsTakenWhole) {
  const ExtractedCode code = extract_candidate(kGood);
  ASSERT_TRUE(code.ok) << code.reason;
  EXPECT_EQ(code.code, kGood);
}

TEST(CodeExtractTest, RefusesRepliesWithoutUsableCodeAndSaysWhy) {
  EXPECT_EQ(extract_candidate("I cannot help with that.").reason, "the reply holds no code block");
  EXPECT_EQ(extract_candidate("```python\nprint(1)\n```").reason,
            "no code block in the reply mentions kb_run");
  const ExtractedCode declared_only = extract_candidate(
      "```cpp\nint kb_run(const kb_config*, const kb_tensor*, int32_t, "
      "kb_tensor*, int32_t);\n```");
  EXPECT_FALSE(declared_only.ok);
  EXPECT_NE(declared_only.reason.find("defines no"), std::string::npos);
  const ExtractedCode wrong_types = extract_candidate(
      "```cpp\nextern \"C\" int kb_run(float* a, float* b, int n) { return 0; }\n```");
  EXPECT_FALSE(wrong_types.ok);
  EXPECT_NE(wrong_types.reason.find("(float*, float*, int32_t)"), std::string::npos)
      << wrong_types.reason;
  const ExtractedCode missing_output = extract_candidate(
      "```cpp\nextern \"C\" int kb_run(const kb_config* c, const kb_tensor* in, int32_t n, "
      "kb_tensor* out) { return 0; }\n```");
  EXPECT_FALSE(missing_output.ok);
}

TEST(CodeExtractTest, HugeHostileRepliesEndQuicklyWithAReason) {
  // An unclosed parameter list and a megabyte of fences: linear scans, no recursion to overflow.
  const ExtractedCode open_list =
      extract_candidate("```cpp\nint kb_run(" + std::string(1 << 20, 'a') + "\n```");
  EXPECT_FALSE(open_list.ok);
  std::string fences;
  for (int i = 0; i < 100000; ++i) fences += "```\nkb_run\n";
  EXPECT_FALSE(extract_candidate(fences).ok);
}

}  // namespace
}  // namespace kbench::agents
