// The correctness rule: it accepts the baseline's own bf16 output and rejects zeros, a constant,
// permuted rows and 5% noise on every workload; plus the rule's edge cases on hand-made vectors.
#include "harness/checker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "core/input_gen.h"
#include "harness/problem_instance.h"
#include "workloads/registry.h"

namespace kbench {
namespace {

class CheckerOn : public ::testing::TestWithParam<const Workload*> {
 protected:
  void SetUp() override {
    instance_ = std::make_unique<ProblemInstance>(*GetParam(), Size::kSmoke);
    instance_->generate(20261130);
    auto oracle = instance_->run_trusted(GetParam()->baseline, 1, KB_F32);
    auto timed = instance_->run_trusted(GetParam()->baseline, 1, KB_BF16);
    oracle_ = to_f32(oracle[0].view());
    bf16_output_ = to_f32(timed[0].view());
    row_length_ = GetParam()->problem(Size::kSmoke).outputs[0].shape.empty()
                      ? 1
                      : GetParam()->problem(Size::kSmoke).outputs[0].shape.back();
  }
  CheckResult check(const std::vector<float>& out) const {
    return check_close(out.data(), oracle_.data(), oracle_.size(), GetParam()->tolerance, "out");
  }
  std::unique_ptr<ProblemInstance> instance_;
  std::vector<float> oracle_, bf16_output_;
  std::int64_t row_length_ = 1;
};

TEST_P(CheckerOn, AcceptsTheBaselinesBf16Output) {
  const CheckResult r = check(bf16_output_);
  EXPECT_TRUE(r.passed) << r.detail;
}

TEST_P(CheckerOn, RejectsZeros) {
  EXPECT_FALSE(check(std::vector<float>(oracle_.size(), 0.0f)).passed);
}

TEST_P(CheckerOn, RejectsAConstant) {
  EXPECT_FALSE(check(std::vector<float>(oracle_.size(), 0.5f)).passed);
}

TEST_P(CheckerOn, RejectsPermutedRows) {
  if (oracle_.size() == static_cast<std::size_t>(row_length_))
    GTEST_SKIP() << "a single row cannot be permuted";
  std::vector<float> rotated(oracle_.size());
  for (std::size_t i = 0; i < oracle_.size(); ++i)
    rotated[(i + static_cast<std::size_t>(row_length_)) % oracle_.size()] = oracle_[i];
  const CheckResult r = check(rotated);
  EXPECT_FALSE(r.passed);
}

TEST_P(CheckerOn, RejectsFivePercentNoise) {
  double sum_sq = 0;
  for (float v : oracle_) sum_sq += double{v} * v;
  const double rms = std::sqrt(sum_sq / static_cast<double>(oracle_.size()));
  std::mt19937 rng(7);
  std::vector<float> noisy = oracle_;
  for (float& v : noisy) v += static_cast<float>((rng() & 1 ? 0.05 : -0.05) * rms);
  const CheckResult r = check(noisy);
  EXPECT_FALSE(r.passed);
  EXPECT_NEAR(r.rel_l2_err, 0.05, 0.005);
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, CheckerOn,
                         ::testing::ValuesIn(all_workloads().begin(), all_workloads().end()),
                         [](const ::testing::TestParamInfo<const Workload*>& workload) {
                           return std::string(workload.param->name);
                         });

TEST(CheckClose, NamesTheWorstElement) {
  const std::vector<float> oracle = {1, 2, 3, 4};
  const std::vector<float> out = {1, 2.5f, 3, 4.01f};
  const CheckResult r = check_close(out.data(), oracle.data(), 4, Tolerance{}, "y");
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("y[1]"), std::string::npos) << r.detail;
  EXPECT_DOUBLE_EQ(r.max_abs_err, 0.5);
}

TEST(CheckClose, NonFiniteOnlyWhereTheOracleHasTheSame) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  const std::vector<float> oracle = {1, nan, inf};
  EXPECT_TRUE(
      check_close(std::vector<float>{1, nan, inf}.data(), oracle.data(), 3, {}, "y").passed);
  EXPECT_FALSE(check_close(std::vector<float>{1, 0, inf}.data(), oracle.data(), 3, {}, "y").passed);
  EXPECT_FALSE(
      check_close(std::vector<float>{1, nan, -inf}.data(), oracle.data(), 3, {}, "y").passed);
  EXPECT_FALSE(
      check_close(std::vector<float>{inf, nan, inf}.data(), oracle.data(), 3, {}, "y").passed);
}

TEST(CheckClose, RelativeL2BoundAppliesEvenWhenElementsAreClose) {
  // Every element within atol of a tiny oracle, yet 100% relative L2 error.
  const std::vector<float> oracle = {0.001f, -0.001f, 0.001f};
  const std::vector<float> out = {0.002f, -0.002f, 0.002f};
  const CheckResult r = check_close(out.data(), oracle.data(), 3, Tolerance{}, "y");
  EXPECT_FALSE(r.passed);
  EXPECT_NEAR(r.rel_l2_err, 1.0, 1e-6);
}

// A sum of rounded terms that cancel: each element's bound grows by term_rtol times its term
// magnitude, through both passes of the check (fast lanes and the exact element pass) and the
// tensor form; without magnitudes the rule is the plain one.
TEST(CheckClose, TermMagnitudesWidenEachElementsBound) {
  Tolerance tol{.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 1.0, .term_rtol = 0x1p-8};
  std::vector<float> oracle(19, 1.0f), out(19, 1.0f), magnitude(19, 0.0f);
  out[17] = 1.3f;         // 0.3 off, far over atol + rtol = 0.02
  magnitude[17] = 80.0f;  // 2^-8 * 80 = 0.3125 allows it
  EXPECT_TRUE(check_close(out.data(), oracle.data(), 19, tol, "y", magnitude.data()).passed);
  const CheckResult strict = check_close(out.data(), oracle.data(), 19, tol, "y");
  EXPECT_FALSE(strict.passed) << "without magnitudes the bound is atol + rtol * |oracle|";
  magnitude[17] = 70.0f;  // 0.273 + 0.02 < 0.3
  const CheckResult over = check_close(out.data(), oracle.data(), 19, tol, "y", magnitude.data());
  EXPECT_FALSE(over.passed);
  EXPECT_NE(over.detail.find("term magnitude 70"), std::string::npos) << over.detail;
  tol.term_rtol = 0;  // a rule without the term ignores magnitudes
  magnitude[17] = 1e6f;
  EXPECT_FALSE(check_close(out.data(), oracle.data(), 19, tol, "y", magnitude.data()).passed);

  tol.term_rtol = 0x1p-8;
  magnitude[17] = 80.0f;
  const kb_tensor out_t{out.data(), KB_F32, 1, {19}}, oracle_t{oracle.data(), KB_F32, 1, {19}},
      magnitude_t{magnitude.data(), KB_F32, 1, {19}};
  EXPECT_TRUE(check_close(out_t, oracle_t, tol, "y", &magnitude_t).passed);
  EXPECT_FALSE(check_close(out_t, oracle_t, tol, "y").passed);
  const kb_tensor short_t{magnitude.data(), KB_F32, 1, {18}};
  EXPECT_THROW(check_close(out_t, oracle_t, tol, "y", &short_t), std::logic_error);
  EXPECT_NE(rule_text(tol).find("0.00390625 * (sum of |terms|"), std::string::npos)
      << rule_text(tol);
}

TEST(CheckClose, AllZeroOracleAcceptsOnlyZeros) {
  const std::vector<float> zeros(4, 0.0f), small = {0, 0, 0, 1e-3f};
  EXPECT_TRUE(check_close(zeros.data(), zeros.data(), 4, {}, "y").passed);
  EXPECT_FALSE(check_close(small.data(), zeros.data(), 4, {}, "y").passed);
}

// A timed call has the baseline's output at hand, not the oracle's. Here the baseline's output
// sits half the rule from the oracle (bound 0.02 at 1.0), as a bf16 baseline's can.
class TimedCheck : public ::testing::Test {
 protected:
  TimedCheck() { problem_.outputs = {{"y", KB_F32, {8}}}; }

  // The verdict on `out`, and how many times the oracle was computed for it.
  std::pair<CheckResult, int> check(std::vector<float> out) {
    int oracle_calls = 0;
    out_ = std::move(out);
    const kb_tensor out_t{out_.data(), KB_F32, 1, {8}},
        baseline_t{baseline_.data(), KB_F32, 1, {8}};
    const CheckResult result =
        check_timed_outputs(problem_, std::span(&out_t, 1), std::span(&baseline_t, 1), tol_, [&] {
          ++oracle_calls;
          OracleOfInputs truth;
          truth.oracle.emplace_back(TensorSpec{"y", KB_F32, {8}});
          std::fill_n(truth.oracle[0].as<float>(), 8, 1.0f);
          return truth;
        });
    return {result, oracle_calls};
  }

  Problem problem_;
  const Tolerance tol_{.atol = 1e-2, .rtol = 1e-2, .max_rel_l2 = 1.0};
  std::vector<float> baseline_ = std::vector<float>(8, 1.01f), out_;
};

TEST_F(TimedCheck, TheBaselinesOwnOutputPassesWithoutTheOracle) {
  const auto [result, oracle_calls] = check(baseline_);
  EXPECT_TRUE(result.passed) << result.detail;
  EXPECT_EQ(oracle_calls, 0);
}

TEST_F(TimedCheck, WithinHalfTheRuleOfTheBaselinePassesWithoutTheOracle) {
  const auto [result, oracle_calls] = check(std::vector<float>(8, 1.019f));  // 0.009 from it
  EXPECT_TRUE(result.passed) << result.detail;
  EXPECT_EQ(oracle_calls, 0);
}

// 0.0195 from the baseline's output is within the rule of it (0.0201), and was accepted so; it is
// 0.0295 from the oracle, beyond the rule (0.02).
TEST_F(TimedCheck, WithinTheRuleOfTheBaselineButNotOfTheOracleFails) {
  const auto [result, oracle_calls] = check(std::vector<float>(8, 1.0295f));
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(oracle_calls, 1);
}

// 0.025 from the baseline's output, beyond the rule of it, yet 0.015 from the oracle: a faithful
// output on the other side of the oracle from the baseline's.
TEST_F(TimedCheck, BeyondTheRuleOfTheBaselineButWithinTheOraclesPasses) {
  const auto [result, oracle_calls] = check(std::vector<float>(8, 0.985f));
  EXPECT_TRUE(result.passed) << result.detail;
  EXPECT_EQ(oracle_calls, 1);
}

}  // namespace
}  // namespace kbench
