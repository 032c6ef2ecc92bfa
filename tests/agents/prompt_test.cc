// What a model reads: the task, with the operator as the reference's file states it; and the
// feedback after an attempt, the compiler's errors within a budget, so that one enormous line
// cannot crowd out the errors after it.
#include "agents/prompt.h"

#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "workloads/registry.h"

namespace kbench::agents {
namespace {

// Every workload's task states its operator, where only seven had semantics in docs/workloads.md:
// 31k's epsilon and GELU form are in the prompt, not left to the model to guess.
TEST(TaskPrompt, CarriesTheOperatorAsTheReferenceStatesIt) {
  TaskDescription task;
  task.workload = find_workload("31k");
  task.size = Size::kSmoke;
  task.threads = 1;
  const std::string prompt = task_prompt(task);
  EXPECT_NE(prompt.find("## The operator"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("z = (y - mean) / sqrt(var + 1e-5) * bn_weight + bn_bias;"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("gelu = jax.nn.gelu's default tanh form"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("// Operator"), std::string::npos) << "comment marks stripped";
}

AgentSample compile_error_sample() {
  AgentSample sample;
  sample.status = "compile_error";
  return sample;
}

TEST(FeedbackText, AnEnormousCompilerLineIsClippedAndTheErrorsAfterItStay) {
  EvalResult r;
  r.status = Status::kCompileError;
  r.diagnostics = "b.cpp:1:1: error: stray '\\177' in program\n    1 | " + std::string(20000, 'x') +
                  "\nb.cpp:2:9: error: the second error\n";
  const std::string text = feedback_text(compile_error_sample(), &r);
  EXPECT_NE(text.find("b.cpp:1:1: error: stray"), std::string::npos) << text;
  EXPECT_NE(text.find("more bytes]"), std::string::npos) << text;
  EXPECT_NE(text.find("b.cpp:2:9: error: the second error"), std::string::npos) << text;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 450u);
}

TEST(FeedbackText, ManyCompilerLinesStopAtTheBudgetAndSayHowMuchIsLeft) {
  EvalResult r;
  r.status = Status::kCompileError;
  for (int i = 0; i < 500; ++i) r.diagnostics += "b.cpp:" + std::to_string(i) + ":1: error: e\n";
  const std::string text = feedback_text(compile_error_sample(), &r);
  EXPECT_NE(text.find("b.cpp:0:1: error: e\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("b.cpp:499:1: error: e"), std::string::npos) << text;
  EXPECT_NE(text.find(" more bytes)"), std::string::npos) << text;
  EXPECT_LT(text.size(), 3300u);
}

}  // namespace
}  // namespace kbench::agents
