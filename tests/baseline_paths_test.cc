// Every matmul-class baseline agrees with its reference on every GEMM path this machine's libraries
// offer, as the timed kernel (bf16 outputs) and as the oracle (f32): a path that the plan may pick
// on some machine must never change a verdict.
#include <gtest/gtest.h>

#include <string>

#include "harness/checker.h"
#include "harness/problem_instance.h"
#include "ops/gemm.h"
#include "workloads/registry.h"

namespace kbench {
namespace {

// Sends every GEMM shape class that `workload`'s smoke baseline meets to `path`.
void force_path(const Workload& workload, ProblemInstance& instance, ops::GemmPath path) {
  ops::set_gemm_plan("");
  for (const kb_dtype dtype : {KB_BF16, KB_F32}) instance.run_trusted(workload.baseline, 1, dtype);
  std::string plan;
  for (const ops::GemmShapeClass& c : ops::unplanned_gemm_classes()) {
    if (!plan.empty()) plan += ';';
    plan += c.key();
    plan += '=';
    plan += ops::gemm_path_name(path);
  }
  ops::set_gemm_plan(plan);
}

TEST(BaselinePaths, EveryMatmulBaselineMatchesItsReferenceOnEveryPath) {
  int checked = 0;
  for (const Workload* w : all_workloads()) {
    if (w->math != MathClass::kBf16Matmul) continue;
    ProblemInstance instance(*w, Size::kSmoke);
    for (const ops::GemmPath path : ops::kAllGemmPaths) {
      for (const std::uint64_t seed : {11u, 12u}) {
        SCOPED_TRACE(testing::Message()
                     << w->name << " on " << ops::gemm_path_name(path) << ", seed " << seed);
        instance.generate(seed);
        force_path(*w, instance, path);
        std::vector<HostTensor> truth = instance.run_trusted(w->reference, 1);
        const auto expected = to_f32(truth);
        for (const kb_dtype dtype : {KB_BF16, KB_F32}) {
          std::vector<HostTensor> got = instance.run_trusted(w->baseline, 1, dtype);
          const CheckResult c =
              check_outputs(instance.problem(), to_f32(got), expected, w->tolerance);
          EXPECT_TRUE(c.passed) << (dtype == KB_BF16 ? "bf16" : "f32") << " outputs: " << c.detail;
          ++checked;
        }
      }
    }
  }
  ops::set_gemm_plan("");
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace kbench
