// Timing under interference on synthetic sample streams: parsing the scheduler's counters, the
// adjusted time (and why a worker cannot game it), the paired-ratio estimator with disturbances
// injected on one or both sides, the adaptive stopping rule, and the stability verdict.
#include "harness/noise.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <random>
#include <vector>

#include "harness/schedstat.h"

namespace kbench {
namespace {

// ---- /proc parsing ----

TEST(Schedstat, ParsesThreeNumbersAndRejectsAnythingElse) {
  const auto s = parse_schedstat("123456789 4242 17\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->run_ns, 123456789u);
  EXPECT_EQ(s->wait_ns, 4242u);
  EXPECT_TRUE(parse_schedstat("0 0 0"));
  EXPECT_FALSE(parse_schedstat(""));
  EXPECT_FALSE(parse_schedstat("12 34"));
  EXPECT_FALSE(parse_schedstat("12 x 5\n"));
  EXPECT_FALSE(parse_schedstat("-1 2 3\n"));
  EXPECT_FALSE(parse_schedstat("1 2 3 4\n"));
}

TEST(Schedstat, ReadsThisProcessesThreads) {
  const std::vector<TaskSchedstat> tasks = read_task_schedstats(getpid());
  if (tasks.empty()) GTEST_SKIP() << "this kernel has no /proc/<pid>/task/*/schedstat";
  bool found_main = false;
  for (const TaskSchedstat& t : tasks) found_main = found_main || t.tid == getpid();
  EXPECT_TRUE(found_main);
  EXPECT_TRUE(read_task_schedstats(-1).empty());
}

TEST(ThreadState, ParsesTheLetterAfterTheLastParenthesis) {
  EXPECT_EQ(parse_stat_state("42 (kb_worker) T 1 42 42 0"), 'T');
  // A command name may hold ") R (" itself: the state follows the last ')'.
  EXPECT_EQ(parse_stat_state("42 (a) R (b) S 1 42"), 'S');
  EXPECT_FALSE(parse_stat_state("42 kb_worker T"));
  EXPECT_FALSE(parse_stat_state("42 (kb_worker)"));
  EXPECT_FALSE(parse_stat_state("42 (kb_worker)T 1"));
}

// A child stopped by SIGSTOP has no unstopped thread; running, it is found with its state.
TEST(ThreadState, FindsAThreadThatIsNotStopped) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) pause();
  }
  kill(child, SIGSTOP);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  EXPECT_FALSE(first_unstopped_thread(child));
  kill(child, SIGCONT);
  std::optional<ThreadState> running;
  for (int attempt = 0; attempt < 1000 && !running; ++attempt) {
    running = first_unstopped_thread(child);
    if (!running) usleep(1000);
  }
  ASSERT_TRUE(running);
  EXPECT_EQ(running->tid, child);
  EXPECT_NE(running->state, 'T');
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  EXPECT_FALSE(first_unstopped_thread(child));
}

TEST(Schedstat, DeltaSumsThreadsAndNamesTheBusiestOne) {
  const std::vector<TaskSchedstat> before = {{10, 1'000'000, 0}, {11, 5'000'000, 2'000'000}};
  const std::vector<TaskSchedstat> after = {
      {10, 41'000'000, 30'000'000},  // ran 40 ms, waited 30 ms
      {11, 15'000'000, 2'000'000},   // ran 10 ms
      {12, 3'000'000, 1'000'000},    // started during the call
  };
  const SchedDelta d = sched_delta(before, after);
  ASSERT_TRUE(d.valid);
  EXPECT_NEAR(d.run_s, 0.053, 1e-12);
  EXPECT_NEAR(d.wait_s, 0.031, 1e-12);
  EXPECT_NEAR(d.busiest_run_s, 0.040, 1e-12);
  EXPECT_NEAR(d.busiest_wait_s, 0.030, 1e-12);
  EXPECT_FALSE(sched_delta({}, after).valid);
  // A thread that barely ran (woken by the thaw, back to sleep) adds no wait.
  const SchedDelta idle =
      sched_delta({{10, 0, 0}, {11, 0, 0}}, {{10, 2'000'000, 100'000}, {11, 20'000, 1'900'000}});
  EXPECT_NEAR(idle.wait_s, 0.0001, 1e-12);
  EXPECT_NEAR(idle.run_s, 0.00202, 1e-12);
  // A reused tid whose counters went backwards counts from zero.
  const SchedDelta reused = sched_delta({{10, 9'000'000, 9'000'000}}, {{10, 2'000'000, 0}});
  EXPECT_NEAR(reused.run_s, 0.002, 1e-12);
}

constexpr const char* kProcStat =
    "cpu  1000 0 200 5000 10 0 5 50 0 0\n"
    "cpu0 500 0 100 2500 5 0 3 40 30 0\n"  // guest 30 is already inside user
    "cpu1 500 0 100 2500 5 0 2 10 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n"
    "cpu3 1 2 3 4\n";  // an old kernel without iowait.. steal columns

TEST(ProcStat, ParsesPerCpuLinesAndSteal) {
  const auto cpus = parse_proc_stat(kProcStat);
  ASSERT_EQ(cpus.size(), 3u);
  EXPECT_EQ(cpus.at(0).total, 500u + 100 + 2500 + 5 + 3 + 40);
  EXPECT_EQ(cpus.at(0).steal, 40u);
  EXPECT_EQ(cpus.at(1).steal, 10u);
  EXPECT_EQ(cpus.at(3).total, 10u);
  EXPECT_EQ(cpus.at(3).steal, 0u);
  EXPECT_FALSE(read_proc_stat().empty());
}

TEST(ProcStat, StealPercentOverTheWorkersCpusOnly) {
  const std::map<int, CpuTicks> before = {{0, {1000, 10}}, {1, {1000, 0}}};
  const std::map<int, CpuTicks> after = {{0, {1200, 30}}, {1, {1200, 100}}};
  EXPECT_DOUBLE_EQ(steal_percent(before, after, {0}), 10.0);  // 20 of 200 ticks
  EXPECT_DOUBLE_EQ(steal_percent(before, after, {0, 1}), 30.0);
  EXPECT_DOUBLE_EQ(steal_percent(before, after, {5}), 0.0);
  EXPECT_DOUBLE_EQ(steal_percent(before, before, {0}), 0.0);
}

// ---- the adjusted time ----

SchedDelta sched(double run_ms, double wait_ms, double busiest_run_ms, double busiest_wait_ms) {
  return {true, run_ms * 1e-3, wait_ms * 1e-3, busiest_run_ms * 1e-3, busiest_wait_ms * 1e-3};
}

TEST(CallTiming, TakesOutTheRunQueueWaitOfTheCriticalThread) {
  // Time-shared with another process: 40 ms of work took 80 ms of wall time.
  const CallTiming t = call_timing(0.080, sched(40, 40, 40, 40), 1);
  EXPECT_NEAR(t.adjusted_ms, 40, 1e-9);
  EXPECT_EQ(t.disturbed, kWaited);
  EXPECT_NEAR(t.offcpu_ms, 40, 1e-9);
  // Undisturbed.
  const CallTiming quiet = call_timing(0.0401, sched(40, 0.01, 40, 0.01), 1);
  EXPECT_EQ(quiet.disturbed, kClean);
  EXPECT_NEAR(quiet.adjusted_ms, 40.09, 1e-9);
  // Steal (or a blocked thread): off CPU without waiting to run, nothing to take out.
  const CallTiming stolen = call_timing(0.060, sched(40, 0, 40, 0), 1);
  EXPECT_EQ(stolen.disturbed, kDisturbed);
  EXPECT_NEAR(stolen.adjusted_ms, 60, 1e-9);
  // No counters: the wall time, unjudged.
  const CallTiming blind = call_timing(0.050, SchedDelta{}, 1);
  EXPECT_FALSE(blind.accounted);
  EXPECT_NEAR(blind.adjusted_ms, 50, 1e-9);
  EXPECT_EQ(blind.disturbed, kClean);
}

TEST(CallTiming, OversubscribingItsOwnCpusGainsAWorkerNothing) {
  // One CPU, 80 ms of work split over two threads: each waits while the other runs. Taking out the
  // critical thread's wait alone would report 40 ms; cpu / threads keeps it at 80.
  const CallTiming t = call_timing(0.080, sched(80, 80, 40, 40), 1);
  EXPECT_NEAR(t.adjusted_ms, 80, 1e-9);
  // The same with two CPUs granted: 80 ms of work cannot take less than 40 ms.
  EXPECT_NEAR(call_timing(0.080, sched(80, 80, 40, 40), 2).adjusted_ms, 40, 1e-9);
  // Never above the wall time.
  EXPECT_NEAR(call_timing(0.010, sched(30, 0, 10, 0), 1).adjusted_ms, 10, 1e-9);
}

TEST(CallTiming, SubMillisecondCallsAreNotAllDisturbed) {
  // 20 us of wake-up latency on a 50 us call is under the 0.1 ms floor.
  EXPECT_EQ(call_timing(50e-6, sched(0.03, 0.02, 0.03, 0.02), 1).disturbed, kClean);
}

// ---- the estimator on synthetic streams ----

// A kernel with true time `ms`: multiplicative lognormal noise of `cv`, and a drift that hits both
// calls of a pair (the machine state of that moment) by `drift_cv`.
struct Stream {
  std::vector<double> baseline, candidate;
  std::vector<std::uint8_t> baseline_disturbed, candidate_disturbed;
};

Stream paired_stream(double base_ms, double cand_ms, int n, double cv, double drift_cv,
                     std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, cv), drift(0.0, drift_cv);
  Stream s;
  for (int i = 0; i < n; ++i) {
    const double d = drift(rng);
    s.baseline.push_back(base_ms * d * noise(rng));
    s.candidate.push_back(cand_ms * d * noise(rng));
    s.baseline_disturbed.push_back(kClean);
    s.candidate_disturbed.push_back(kClean);
  }
  return s;
}

// Interference on `side`: a share of its calls slowed by 30-100%; the scheduler saw it
// (`flagged` marks them kDisturbed, the class the adjustment cannot take out).
void disturb(std::vector<double>& ms, std::vector<std::uint8_t>& flags, double share, bool flagged,
             std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < ms.size(); ++i) {
    if (u(rng) >= share) continue;
    ms[i] *= 1.3 + 0.7 * u(rng);
    if (flagged) flags[i] = kDisturbed;
  }
}

// As the evaluator makes a paired result from its two series.
EvalResult result_of(const Stream& s) {
  const SpeedupEstimate pooled = estimate_speedup(s.baseline, s.candidate);
  const OrderEffect order = order_effect(s.baseline, s.candidate);
  const SpeedupEstimate reported = reported_estimate(pooled, order);
  EvalResult r;
  r.speedup = reported.speedup;
  r.speedup_ci95 = reported.ci95;
  r.noise = noise_report({s.candidate, s.candidate_disturbed}, {s.baseline, s.baseline_disturbed},
                         pooled, 0.0, true, order);
  return r;
}

// A side effect of the candidate's calls on the call after them: in the pairs where the candidate
// goes first, the baseline's call follows it and takes `factor` as long.
void slow_the_call_after_the_candidate(Stream& s, double factor) {
  for (std::size_t i = 0; i < s.baseline.size(); ++i)
    if (candidate_goes_first(i)) s.baseline[i] *= factor;
}

TEST(Estimator, QuietAaRunIsNoSignificantDifference) {
  const Stream s = paired_stream(40, 40, 60, 0.01, 0.05, 1);
  const EvalResult r = result_of(s);
  EXPECT_NEAR(*r.speedup, 1.0, 0.01);
  EXPECT_TRUE(r.noise->stable) << r.noise->unstable_reason;
  EXPECT_STREQ(significance(r), "no significant difference");
}

TEST(Estimator, PairingCancelsDriftThatHitsBothCalls) {
  // 20% drift between pairs, 1% within: the paired ratio sees only the 1%.
  const Stream s = paired_stream(50, 40, 40, 0.01, 0.20, 2);
  const SpeedupEstimate e = estimate_speedup(s.baseline, s.candidate);
  EXPECT_NEAR(e.speedup, 1.25, 0.01);
  EXPECT_LT(e.half_width, 0.01);
}

TEST(Estimator, AaWithOneSideDisturbedClaimsNoSpeedup) {
  // A/A, a third of the baseline's calls hit by interference the adjustment could not remove.
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Stream s = paired_stream(40, 40, 60, 0.02, 0.05, 100 + seed);
    disturb(s.baseline, s.baseline_disturbed, 0.33, /*flagged=*/true, 200 + seed);
    const EvalResult r = result_of(s);
    const std::string verdict = significance(r);
    EXPECT_NE(verdict, "faster") << "seed " << seed << ": " << *r.speedup;
    EXPECT_NE(verdict, "slower") << "seed " << seed << ": " << *r.speedup;
    // One-sided disturbance is itself the reason the run is not stable.
    EXPECT_FALSE(r.noise->stable) << "seed " << seed;
    EXPECT_NE(r.noise->unstable_reason.find("one side"), std::string::npos)
        << r.noise->unstable_reason;
  }
}

TEST(Estimator, AaWithUnflaggedDisturbanceOnOneSideStaysNearOne) {
  // The scheduler saw nothing (memory-bandwidth interference, say): the median of paired ratios
  // still lands within 3% when a fifth of one side's calls are slowed.
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Stream s = paired_stream(40, 40, 80, 0.01, 0.05, 300 + seed);
    disturb(s.candidate, s.candidate_disturbed, 0.2, /*flagged=*/false, 400 + seed);
    const SpeedupEstimate e = estimate_speedup(s.baseline, s.candidate);
    EXPECT_GT(e.speedup, 0.97) << "seed " << seed;
    EXPECT_LT(e.speedup, 1.02) << "seed " << seed;
  }
}

TEST(Estimator, AaWithBothSidesDisturbedAlikeIsStableAndCoversOne) {
  int covered = 0, stable = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    Stream s = paired_stream(40, 40, 60, 0.02, 0.05, 500 + seed);
    disturb(s.baseline, s.baseline_disturbed, 0.15, true, 600 + seed);
    disturb(s.candidate, s.candidate_disturbed, 0.15, true, 700 + seed);
    const EvalResult r = result_of(s);
    EXPECT_NEAR(*r.speedup, 1.0, 0.03) << "seed " << seed;
    if (r.speedup_ci95->first <= 1.0 && 1.0 <= r.speedup_ci95->second) ++covered;
    if (r.noise->stable) ++stable;
  }
  EXPECT_GE(covered, 36);  // >= 90% of 40 (95% nominal; the bound leaves room for chance)
  EXPECT_GE(stable, 38);
}

TEST(Estimator, RealSpeedupIsFasterAndStable) {
  Stream s = paired_stream(80, 40, 40, 0.03, 0.05, 9);
  disturb(s.baseline, s.baseline_disturbed, 0.1, true, 10);
  disturb(s.candidate, s.candidate_disturbed, 0.1, true, 11);
  const EvalResult r = result_of(s);
  EXPECT_NEAR(*r.speedup, 2.0, 0.05);
  EXPECT_TRUE(r.noise->stable) << r.noise->unstable_reason;
  EXPECT_STREQ(significance(r), "faster");
  std::swap(s.baseline, s.candidate);
  EXPECT_STREQ(significance(result_of(s)), "slower");
}

// The order tests draw pairs 1% apart (drift_cv 0.01): neighbouring pairs on a real machine differ
// that little (measured on 13p's A/A runs: the carry-over's interval was +-1-2% over 45-63
// couples), where drift_cv 0.05 models each pair on a machine of its own.
TEST(OrderEffect, ACallThatSlowsTheOtherSidesNextCallIsUnstable) {
  Stream s = paired_stream(40, 40, 60, 0.01, 0.01, 21);
  slow_the_call_after_the_candidate(s, 1.06);
  const OrderEffect o = order_effect(s.baseline, s.candidate);
  EXPECT_EQ(o.candidate_first_pairs, 30);
  EXPECT_EQ(o.baseline_first_pairs, 30);
  EXPECT_NEAR(o.candidate_first, 1.06, 0.01);
  EXPECT_NEAR(o.baseline_first, 1.00, 0.01);
  EXPECT_NEAR(o.split, 1.06, 0.015);
  // The pairs it goes first in take 6% longer (in the product of their two calls).
  EXPECT_EQ(o.couples, 30);
  EXPECT_NEAR(o.carryover, 1.06, 0.015);
  EXPECT_GT(o.carryover_ci95.first, 1.0);
  // Pooled, the 6% lands somewhere between the halves; the carry-over is what names it.
  const EvalResult r = result_of(s);
  EXPECT_FALSE(r.noise->stable);
  EXPECT_NE(r.noise->unstable_reason.find("carry-over"), std::string::npos)
      << r.noise->unstable_reason;
  EXPECT_STREQ(significance(r), "unstable");
}

TEST(OrderEffect, ABaselineThatFeelsTheOrderMoreStillLetsARealSpeedupBeClaimed) {
  // 2p at the smoke size: the baseline's call takes 20% longer after the candidate's timed call
  // than after its bridge and the drawing of new inputs, the expert's the same either way. The
  // orders differ beyond chance (carry-over 1.2), yet both say "faster": the result is stable and
  // reports the order nearer 1.0, 3.0x, not the pooled median between the orders.
  Stream s = paired_stream(0.30, 0.10, 60, 0.01, 0.01, 25);
  slow_the_call_after_the_candidate(s, 1.2);
  const OrderEffect o = order_effect(s.baseline, s.candidate);
  EXPECT_NEAR(o.carryover, 1.2, 0.03);
  EXPECT_GT(o.carryover_ci95.first, 1.0);
  const EvalResult r = result_of(s);
  EXPECT_TRUE(r.noise->stable) << r.noise->unstable_reason;
  EXPECT_STREQ(significance(r), "faster");
  EXPECT_NEAR(*r.speedup, 3.0, 0.05);
  EXPECT_NEAR(*r.speedup, o.baseline_first, 1e-12);
  EXPECT_NE(*r.speedup, estimate_speedup(s.baseline, s.candidate).speedup);
}

TEST(OrderEffect, WhatOnlyOneOrderGainsNeitherDecidesNorSizesTheClaim) {
  // A candidate 5% faster that also slows the baseline's call after its untimed bridge call (the
  // baseline-first pairs) by 30%: that order reads 1.37x. Both orders claim "faster", which is
  // true; the reported speedup is the other order's 1.05x.
  Stream s = paired_stream(42, 40, 60, 0.01, 0.01, 26);
  for (std::size_t i = 0; i < s.baseline.size(); ++i)
    if (!candidate_goes_first(i)) s.baseline[i] *= 1.3;
  EvalResult r = result_of(s);
  EXPECT_TRUE(r.noise->stable) << r.noise->unstable_reason;
  EXPECT_STREQ(significance(r), "faster");
  EXPECT_NEAR(*r.speedup, 1.05, 0.01);
  // The pooled median falls between the orders: what agent metrics (which read the speedup, not
  // the verdict) took before.
  EXPECT_GT(estimate_speedup(s.baseline, s.candidate).speedup, 1.1);
  // With no real gain, the orders disagree (1.0x against 1.3x): no claim.
  Stream equal = paired_stream(40, 40, 60, 0.01, 0.01, 27);
  for (std::size_t i = 0; i < equal.baseline.size(); ++i)
    if (!candidate_goes_first(i)) equal.baseline[i] *= 1.3;
  r = result_of(equal);
  EXPECT_FALSE(r.noise->stable);
  EXPECT_NE(r.noise->unstable_reason.find("carry-over"), std::string::npos)
      << r.noise->unstable_reason;
  EXPECT_STREQ(significance(r), "unstable");
}

TEST(OrderEffect, APositionalEffectOnBothSidesSplitsButCarriesNothingOver) {
  // The first call of every pair 5% slower, whichever side makes it: the split moves, the
  // alternating order cancels it, and the result stays stable.
  Stream s = paired_stream(40, 40, 60, 0.01, 0.01, 24);
  for (std::size_t i = 0; i < s.baseline.size(); ++i)
    (candidate_goes_first(i) ? s.candidate[i] : s.baseline[i]) *= 1.05;
  const OrderEffect o = order_effect(s.baseline, s.candidate);
  EXPECT_NEAR(o.split, 1 / (1.05 * 1.05), 0.015);
  EXPECT_NEAR(o.carryover, 1.0, 0.01);
  const EvalResult r = result_of(s);
  EXPECT_TRUE(r.noise->stable) << r.noise->unstable_reason;
  EXPECT_NEAR(*r.speedup, 1.0, 0.03);
}

TEST(OrderEffect, ASmallOrUncertainCarryoverStaysStable) {
  // 2% after the candidate: a carry-over of 1%, below kMaxCarryover.
  Stream small = paired_stream(40, 40, 60, 0.01, 0.01, 22);
  slow_the_call_after_the_candidate(small, 1.02);
  EXPECT_TRUE(result_of(small).noise->stable) << result_of(small).noise->unstable_reason;
  // 6% on calls that vary 10% each, in a short run: the interval covers 1.
  Stream noisy = paired_stream(40, 40, 12, 0.10, 0.05, 23);
  slow_the_call_after_the_candidate(noisy, 1.06);
  const OrderEffect o = order_effect(noisy.baseline, noisy.candidate);
  EXPECT_LE(o.carryover_ci95.first, 1.0);
  EXPECT_GE(o.carryover_ci95.second, 1.0);
  EXPECT_EQ(result_of(noisy).noise->unstable_reason.find("carry-over"), std::string::npos);
}

TEST(OrderEffect, HonestAaStreamsAreRarelyFlagged) {
  // Even with every pair on a machine of its own (5% between pairs), a carry-over is claimed only
  // where its 95% interval excludes 1 and it exceeds 3%: at most the interval's 5% of runs.
  int flagged = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const Stream s = paired_stream(40, 40, 40, 0.02, 0.05, 800 + seed);
    const EvalResult r = result_of(s);
    if (r.noise->unstable_reason.find("carry-over") != std::string::npos) ++flagged;
  }
  EXPECT_LE(flagged, 5);
  // On realistic neighbours (1%), none.
  int realistic = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const EvalResult r = result_of(paired_stream(40, 40, 40, 0.02, 0.01, 900 + seed));
    if (r.noise->unstable_reason.find("carry-over") != std::string::npos) ++realistic;
  }
  EXPECT_LE(realistic, 1);
}

TEST(Significance, ClaimsOnlyBeyondTheMarginOfTwoIdenticalProcesses) {
  EvalResult r;
  NoiseReport stable;
  stable.stable = true;
  r.noise = stable;
  r.speedup = 1.012;
  r.speedup_ci95 = std::pair(1.004, 1.03);  // excludes 1.0, but by less than kClaimMargin
  EXPECT_STREQ(significance(r), "no significant difference");
  r.speedup_ci95 = std::pair(1.0 + kClaimMargin + 0.001, 1.05);
  EXPECT_STREQ(significance(r), "faster");
  r.speedup_ci95 = std::pair(0.9, 1.0 - kClaimMargin - 0.001);
  EXPECT_STREQ(significance(r), "slower");
  r.noise->stable = false;
  EXPECT_STREQ(significance(r), "unstable");
  r.speedup.reset();
  EXPECT_STREQ(significance(r), "");
}

TEST(Estimator, MostPairsBeyondAdjustmentIsUnstable) {
  Stream s = paired_stream(40, 40, 40, 0.02, 0.05, 13);
  disturb(s.baseline, s.baseline_disturbed, 0.6, true, 14);
  disturb(s.candidate, s.candidate_disturbed, 0.6, true, 15);
  const EvalResult r = result_of(s);
  EXPECT_FALSE(r.noise->stable);
  EXPECT_STREQ(significance(r), "unstable");
}

TEST(Estimator, WideIntervalIsUnstable) {
  const Stream s = paired_stream(40, 40, 10, 0.3, 0.0, 17);
  const EvalResult r = result_of(s);
  EXPECT_GT(r.noise->ci_half_width_pct, 5.0);
  EXPECT_FALSE(r.noise->stable);
  EXPECT_NE(r.noise->unstable_reason.find("CI half-width"), std::string::npos);
}

TEST(Estimator, OneSeriesMedianAndEmptyInput) {
  const std::vector<double> ms = {10, 11, 9, 10, 10.5, 9.5, 10, 30};
  const SpeedupEstimate e = estimate_median(ms);
  EXPECT_DOUBLE_EQ(e.speedup, 10.0);
  EXPECT_LE(e.ci95.first, 10.0);
  EXPECT_GE(e.ci95.second, 10.0);
  EXPECT_EQ(estimate_speedup({}, {}).pairs, 0);
  EXPECT_TRUE(std::isinf(estimate_median({}).half_width));
}

TEST(NoiseReport, CountsCallsPairsAndSpread) {
  const std::vector<double> cand = {10, 10, 10, 10}, base = {8, 12, 8, 12};
  const std::vector<std::uint8_t> cand_flags = {kClean, kWaited, kClean, kClean},
                                  base_flags = {kDisturbed, kClean, kClean, kClean};
  const SpeedupEstimate e = estimate_speedup(base, cand);
  const NoiseReport n = noise_report({cand, cand_flags}, {base, base_flags}, e, 1.5, true);
  EXPECT_EQ(n.calls, 8);
  EXPECT_EQ(n.disturbed_calls, 2);
  EXPECT_EQ(n.candidate_disturbed, 1);
  EXPECT_EQ(n.baseline_disturbed, 1);
  EXPECT_EQ(n.unadjustable_calls, 1);
  EXPECT_EQ(n.clean_pairs, 2);
  EXPECT_DOUBLE_EQ(n.cv_candidate, 0.0);
  EXPECT_DOUBLE_EQ(n.cv_baseline, 0.2);
  EXPECT_DOUBLE_EQ(n.steal_pct, 1.5);
  EXPECT_EQ(n.estimator, "median_pair_ratio_adjusted");
}

TEST(Binomial, TwoSidedExactTest) {
  EXPECT_DOUBLE_EQ(binomial_two_sided_p(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(binomial_two_sided_p(5, 5), 1.0);
  EXPECT_NEAR(binomial_two_sided_p(10, 0), 2.0 / 1024, 1e-12);
  EXPECT_NEAR(binomial_two_sided_p(0, 10), 2.0 / 1024, 1e-12);
  EXPECT_NEAR(binomial_two_sided_p(9, 1), 2.0 * 11 / 1024, 1e-12);
  EXPECT_GT(binomial_two_sided_p(600, 400), 0.0);  // no underflow to exactly 0 at large n
  EXPECT_LT(binomial_two_sided_p(600, 400), 1e-9);
}

// ---- adaptive stopping ----

TEST(StopRule, MinimumFirstThenTargetMaximumAndBudget) {
  const StopRule rule{.min_iters = 10, .max_iters = 100, .time_budget_s = 5};
  SpeedupEstimate narrow;
  narrow.pairs = 10;
  narrow.half_width = 0.01;
  SpeedupEstimate wide = narrow;
  wide.half_width = 0.1;
  EXPECT_EQ(stop_reason(rule, 9, 100.0, narrow), "");  // the minimum wins over the budget
  EXPECT_EQ(stop_reason(rule, 10, 0.1, narrow), "ci_target");
  EXPECT_EQ(stop_reason(rule, 10, 0.1, wide), "");
  EXPECT_EQ(stop_reason(rule, 10, 5.0, wide), "time_budget");
  EXPECT_EQ(stop_reason(rule, 100, 0.1, wide), "max_iters");
  EXPECT_EQ(stop_reason(rule, 50, 1.0, SpeedupEstimate{}), "");
  // A narrow interval over fewer than kMinStablePairs pairs is no reason to stop.
  SpeedupEstimate few = narrow;
  few.pairs = kMinStablePairs - 1;
  EXPECT_EQ(stop_reason({.min_iters = 2}, kMinStablePairs - 1, 0.1, few), "");
}

// A CI that excludes 1.0 narrowly reaches its target only after kMinSecondsNearOne of timing: such
// an interval from a second or two has said "slower" of an A/A check.
TEST(StopRule, ANarrowIntervalNearOneWaitsForSecondsOfTiming) {
  StopRule rule{.min_iters = 10, .max_iters = 500, .time_budget_s = 10};
  rule.min_seconds_near_one = kMinSecondsNearOne;
  const auto estimate = [](double lo, double hi) {
    SpeedupEstimate e;
    e.pairs = 20;
    e.speedup = (lo + hi) / 2;
    e.ci95 = {lo, hi};
    e.half_width = (hi - lo) / 2 / e.speedup;
    return e;
  };
  const double early = 1.5, late = kMinSecondsNearOne;
  for (const SpeedupEstimate& near : {estimate(0.952, 0.983), estimate(1.01, 1.04)}) {
    EXPECT_EQ(stop_reason(rule, 20, early, near), "") << near.ci95.first;
    EXPECT_EQ(stop_reason(rule, 20, late, near), "ci_target") << near.ci95.first;
    EXPECT_EQ(stop_reason(rule, 500, early, near), "max_iters") << near.ci95.first;
    EXPECT_EQ(stop_reason({.min_iters = 10, .time_budget_s = 1, .min_seconds_near_one = 5}, 20,
                          early, near),
              "time_budget")
        << near.ci95.first;
    // One series (kbench run) has no 1.0 to be near: its interval is in milliseconds.
    EXPECT_EQ(stop_reason({.min_iters = 10}, 20, early, near), "ci_target") << near.ci95.first;
  }
  // An interval covering 1.0, or far from it, stops at the target at once.
  EXPECT_EQ(stop_reason(rule, 20, early, estimate(0.99, 1.02)), "ci_target");
  EXPECT_EQ(stop_reason(rule, 20, early, estimate(1.06, 1.09)), "ci_target");
  EXPECT_EQ(stop_reason(rule, 20, early, estimate(0.91, 0.94)), "ci_target");
}

// Runs the adaptive loop over a synthetic stream with `seconds_per_pair` of simulated time.
std::pair<std::string, int> simulate(const Stream& s, const StopRule& rule,
                                     double seconds_per_pair) {
  for (int iters = 1; iters <= static_cast<int>(s.baseline.size()); ++iters) {
    SpeedupEstimate e;
    if (iters >= rule.min_iters)
      e = estimate_speedup(std::span(s.baseline).first(static_cast<std::size_t>(iters)),
                           std::span(s.candidate).first(static_cast<std::size_t>(iters)));
    const std::string stop = stop_reason(rule, iters, iters * seconds_per_pair, e);
    if (!stop.empty()) return {stop, iters};
  }
  return {"stream ended", static_cast<int>(s.baseline.size())};
}

TEST(StopRule, QuietStreamStopsAtTheTargetNoisyOneAtTheBudget) {
  const StopRule rule{.min_iters = 10, .max_iters = 400, .time_budget_s = 10};
  const auto [quiet_stop, quiet_iters] =
      simulate(paired_stream(40, 40, 400, 0.01, 0.1, 20), rule, 0.1);
  EXPECT_EQ(quiet_stop, "ci_target");
  EXPECT_LT(quiet_iters, 40);
  const auto [noisy_stop, noisy_iters] =
      simulate(paired_stream(40, 40, 400, 0.3, 0.1, 21), rule, 0.1);
  EXPECT_EQ(noisy_stop, "time_budget");
  EXPECT_EQ(noisy_iters, 100);
  const auto [capped, capped_iters] =
      simulate(paired_stream(40, 40, 400, 0.3, 0.1, 22), {.min_iters = 10, .max_iters = 30}, 0.1);
  EXPECT_EQ(capped, "max_iters");
  EXPECT_EQ(capped_iters, 30);
}

// `kbench run`: the baseline alone, then the expert paired with it. A clean, faster paired result
// whose baseline median is `beside_ms` (the stream's baseline is 50 ms per call).
EvalResult paired_result_with_baseline_at(double beside_ms) {
  Stream s = paired_stream(50, 25, 40, 0.01, 0.02, 31);
  for (double& b : s.baseline) b *= beside_ms / 50;
  EvalResult r = result_of(s);
  r.baseline = TimingSummary{};
  r.baseline->median_ms = beside_ms;
  r.speedup_verdict = significance(r);
  return r;
}

TEST(ShortRunsNearOne, AClaimWithinFivePercentOfOneNeedsItsSeconds) {
  // 2.5% faster with a tight interval, as 500 pairs of a smoke-size kernel give in about 2 s.
  EvalResult r = result_of(paired_stream(41, 40, 500, 0.005, 0.001, 30));
  r.speedup_verdict = significance(r);
  ASSERT_EQ(r.speedup_verdict, "faster");
  r.noise->stop_reason = "max_iters";
  EvalResult timed_long_enough = r;
  mark_too_short_near_one(r, 2.3);
  EXPECT_FALSE(r.noise->stable);
  EXPECT_EQ(r.speedup_verdict, "unstable");
  EXPECT_NE(r.noise->unstable_reason.find("after 2.3 s of timing"), std::string::npos)
      << r.noise->unstable_reason;
  EXPECT_NE(r.noise->unstable_reason.find("stopped by max_iters"), std::string::npos);
  mark_too_short_near_one(timed_long_enough, kMinSecondsNearOne);
  EXPECT_EQ(timed_long_enough.speedup_verdict, "faster");
  // Farther from 1.0 than kNearOne, a short run claims; without a claim nothing changes.
  EvalResult clear = result_of(paired_stream(50, 40, 100, 0.005, 0.001, 31));
  clear.speedup_verdict = significance(clear);
  mark_too_short_near_one(clear, 0.5);
  EXPECT_EQ(clear.speedup_verdict, "faster");
  EvalResult same = result_of(paired_stream(40, 40, 100, 0.005, 0.001, 32));
  same.speedup_verdict = significance(same);
  mark_too_short_near_one(same, 0.5);
  EXPECT_EQ(same.speedup_verdict, "no significant difference");
  EXPECT_TRUE(same.noise->stable);
}

TEST(BaselineDrift, WithinTheLimitChangesNothing) {
  EvalResult r = paired_result_with_baseline_at(51);
  ASSERT_EQ(r.speedup_verdict, "faster");
  mark_baseline_drift(r, 50 * (1 + kMaxBaselineDrift) / 1.02);
  EXPECT_TRUE(r.noise->stable);
  EXPECT_EQ(r.speedup_verdict, "faster");
}

TEST(BaselineDrift, ABaselineThatMovedEitherWayMakesThePairsUnstable) {
  for (const double alone_ms : {36.0, 60.0}) {  // beside 50: 39% slower, 17% faster than alone
    EvalResult r = paired_result_with_baseline_at(50);
    mark_baseline_drift(r, alone_ms);
    EXPECT_FALSE(r.noise->stable) << alone_ms;
    EXPECT_EQ(r.speedup_verdict, "unstable");
    EXPECT_NE(r.noise->unstable_reason.find("50 ms beside the candidate"), std::string::npos)
        << r.noise->unstable_reason;
  }
}

TEST(BaselineDrift, ShortCallsMayDifferByTheirCachesAlone) {
  EvalResult r = paired_result_with_baseline_at(0.026);
  mark_baseline_drift(r, 0.021);
  EXPECT_TRUE(r.noise->stable) << r.noise->unstable_reason;
  EvalResult longer = paired_result_with_baseline_at(2.7);
  mark_baseline_drift(longer, 2.1);
  EXPECT_FALSE(longer.noise->stable);
}

TEST(BaselineDrift, AnUnstableResultKeepsItsFirstReason) {
  Stream s = paired_stream(40, 40, 60, 0.01, 0.01, 21);
  slow_the_call_after_the_candidate(s, 1.06);
  EvalResult r = result_of(s);
  r.baseline = TimingSummary{};
  r.baseline->median_ms = 60;
  const std::string reason = r.noise->unstable_reason;
  ASSERT_FALSE(reason.empty());
  mark_baseline_drift(r, 30);
  EXPECT_EQ(r.noise->unstable_reason, reason);
  EXPECT_EQ(r.speedup_verdict, "unstable");
}

TEST(BaselineDrift, NothingToJudgeWithoutABaselineOrASpeedup) {
  EvalResult r = paired_result_with_baseline_at(50);
  r.baseline.reset();
  mark_baseline_drift(r, 10);
  EXPECT_TRUE(r.noise->stable);
  EvalResult failed;
  mark_baseline_drift(failed, 10);
  EXPECT_FALSE(failed.noise.has_value());
  EXPECT_TRUE(failed.speedup_verdict.empty());
}

}  // namespace
}  // namespace kbench
