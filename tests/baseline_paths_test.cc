// Every matmul-class baseline agrees with its reference on every GEMM path this machine's libraries
// offer, as the timed kernel (bf16 outputs) and as the oracle (f32): a path that the plan may pick
// on some machine must never change a verdict. And no baseline, on any path, runs on one of
// oneDNN's reference kernels (ops/onednn_implementations.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/input_gen.h"
#include "harness/checker.h"
#include "harness/problem_instance.h"
#include "ops/gemm.h"
#include "ops/library_calls.h"
#include "ops/onednn_implementations.h"
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

// 32k's hidden activation feeds its second GEMM: stored in bf16 where that GEMM's planned path
// reads bf16 (oneDNN's or oneMKL's bf16 kernels: AMX), rounded to bf16 but kept in f32 where the
// path would widen it anyway. The class that question names is measured like the classes the
// baseline meets.
TEST(BaselinePaths, ThirtyTwoKKeepsItsHiddenActivationInTheDtypeItsSecondGemmReads) {
  const Workload& w = *find_workload("32k");
  ProblemInstance instance(w, Size::kSmoke);
  instance.generate(3);
  for (const ops::GemmPath path : {ops::GemmPath::kOnednnBf16, ops::GemmPath::kOpenblasSgemm}) {
    SCOPED_TRACE(ops::gemm_path_name(path));
    force_path(w, instance, path);
    EXPECT_NE(ops::gemm_plan_encoded().find("29x23x67:nt:bf16:"), std::string::npos)
        << ops::gemm_plan_encoded();
    ops::start_recording_library_calls();
    instance.run_trusted(w.baseline, 1, KB_BF16);
    const std::vector<ops::LibraryCall> calls = ops::stop_recording_library_calls();
    ASSERT_EQ(calls.size(), 2u);
    const ops::GemmShapeClass& second = calls[1].gemm;
    EXPECT_EQ(second.n, 23);
    EXPECT_EQ(second.f32_operands, !ops::takes_bf16_operands(path)) << second.key();
  }
  ops::set_gemm_plan("");
}

// A class the plan did not measure takes the path of the nearest class it did, among those of the
// same layout, operand type and threads; with none such, the default path.
TEST(GemmPlan, AClassThePlanDidNotMeasureTakesItsNearestMeasuredNeighboursPath) {
  ops::set_gemm_plan(
      "100x1024x384:nn:bf16:t1=onednn_bf16;1000x1024x384:nn:bf16:t1=onednn_f32;"
      "120x1024x384:nt:bf16:t1=mkl_sgemm");
  const auto path = [](std::int64_t m, std::int64_t n, bool b_transposed, bool f32, int threads) {
    return ops::planned_gemm_path({m, n, 384, b_transposed, f32, threads});
  };
  EXPECT_EQ(path(100, 1024, false, false, 1), ops::GemmPath::kOnednnBf16);  // its own entry
  EXPECT_EQ(path(121, 1024, false, false, 1), ops::GemmPath::kOnednnBf16);
  EXPECT_EQ(path(301, 1024, false, false, 1),
            ops::GemmPath::kOnednnBf16);  // 3.0x above 100, 3.3x below 1000
  EXPECT_EQ(path(330, 1024, false, false, 1),
            ops::GemmPath::kOnednnF32);  // 3.3x above 100, 3.0x below 1000
  EXPECT_EQ(path(100, 4096, false, false, 1), ops::GemmPath::kOnednnBf16);  // N differs too
  EXPECT_EQ(path(1000, 1024, true, false, 1), ops::GemmPath::kMklSgemm);    // the one nt class
  // No class of the same operand type or threads: the default path.
  EXPECT_EQ(path(100, 1024, false, true, 1), ops::GemmPath::kOpenblasSgemm);
  EXPECT_EQ(path(100, 1024, false, false, 2), ops::GemmPath::kOpenblasSgemm);
  ops::set_gemm_plan("");
  EXPECT_EQ(path(100, 1024, false, false, 1), ops::GemmPath::kOpenblasSgemm);
}

// The case that found it: 11p's GEMMs take one group's rows each, and the group sizes are drawn
// with the inputs, so a plan measured on one draw (kbench's seed 1) misses most classes of the
// next. Every class of another draw must take a path the plan chose, not the default.
TEST(GemmPlan, ShapesThatFollowTheDataTakeThePlannedPathOnEveryDraw) {
  const Workload& w = *find_workload("11p");
  ProblemInstance instance(w, Size::kSmoke);
  instance.generate(1);
  force_path(w, instance, ops::GemmPath::kOnednnBf16);
  instance.generate(2);
  instance.run_trusted(w.baseline, 1, KB_BF16);
  const std::vector<ops::GemmShapeClass> missed = ops::unplanned_gemm_classes();
  ASSERT_FALSE(missed.empty()) << "the draws met the same classes: the test checks nothing";
  for (const ops::GemmShapeClass& c : missed)
    EXPECT_EQ(ops::planned_gemm_path(c), ops::GemmPath::kOnednnBf16) << c.key();
  ops::set_gemm_plan("");
}

void expect_no_reference_kernel() {
  for (const std::string& impl : ops::onednn_implementations_created())
    EXPECT_FALSE(ops::detail::is_reference_implementation(impl)) << impl;
}

TEST(BaselinePaths, NoBaselineRunsOnAReferenceKernel) {
  for (const Workload* w : all_workloads()) {
    ProblemInstance instance(*w, Size::kSmoke);
    instance.generate(5);
    for (const ops::GemmPath path : ops::kAllGemmPaths) {
      force_path(*w, instance, path);
      for (const kb_dtype dtype : {KB_BF16, KB_F32}) instance.run_trusted(w->baseline, 1, dtype);
    }
  }
  ops::set_gemm_plan("");
  EXPECT_FALSE(ops::onednn_implementations_created().empty());
  expect_no_reference_kernel();
}

// The configuration that found the rule: a bf16 multiplier fused into an f32 GEMM, which oneDNN
// 2.6 runs only on a reference kernel on an AVX2 core. The oneDNN path declines it there (the
// OpenBLAS path takes the call) and runs it on an optimized kernel where one exists.
TEST(BaselinePaths, AGemmWhoseEpilogueOnlyAReferenceKernelTakesLeavesOneDnn) {
  const std::int64_t m = 16, n = 24, k = 8;
  HostTensor a({"a", KB_BF16, {m, k}}), b({"b", KB_BF16, {k, n}}), gate({"g", KB_BF16, {m, n}});
  HostTensor c({"c", KB_BF16, {m, n}}), expected({"e", KB_BF16, {m, n}});
  for (HostTensor* t : {&a, &b, &gate}) {
    kb_tensor view = t->view();
    fill_input(InitRule::normal(1.0), 3, 0, view);
  }
  ops::Epilogue epilogue;
  epilogue.activation = ops::Activation::kSilu;
  epilogue.multiplier = ops::Matrix{gate.data(), KB_BF16, m, n, n};
  const ops::Matrix ma{a.data(), KB_BF16, m, k, k}, mb{b.data(), KB_BF16, k, n, n};
  const bool ran = ops::gemm_on_path(ops::GemmPath::kOnednnF32, ma, mb, false,
                                     {c.data(), KB_BF16, m, n, n}, epilogue);
  expect_no_reference_kernel();
  ASSERT_TRUE(ops::gemm_on_path(ops::GemmPath::kOpenblasSgemm, ma, mb, false,
                                {expected.data(), KB_BF16, m, n, n}, epilogue));
  if (ran) {  // an optimized oneDNN kernel took it: the same values as the OpenBLAS path's
    const std::vector<float> got = to_f32(c.view()), want = to_f32(expected.view());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-2 * (1 + std::abs(want[i]))) << i;
  }
}

}  // namespace
}  // namespace kbench
