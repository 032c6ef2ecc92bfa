// Adjusted call times, the paired-ratio estimator, the stopping rule and the noise verdict
// (choices in noise.h).
#include "harness/noise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/stats.h"

namespace kbench {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double relative_half_width(const std::pair<double, double>& ci, double estimate) {
  return estimate > 0 ? (ci.second - ci.first) / 2.0 / estimate : kInfinity;
}

int count_if_at_least(std::span<const std::uint8_t> flags, int level) {
  return static_cast<int>(
      std::count_if(flags.begin(), flags.end(), [&](std::uint8_t f) { return f >= level; }));
}

std::string percent_text(const char* format, double a, double b) {
  char buf[128];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

// The CI excludes 1.0, but its near end lies within kNearOne of it.
bool excludes_one_narrowly(std::pair<double, double> ci95) {
  const auto [lo, hi] = ci95;
  return (lo > 1 && lo < 1 + kNearOne) || (hi < 1 && hi > 1 - kNearOne);
}

}  // namespace

CallTiming call_timing(double wall_s, const SchedDelta& sched, int threads) {
  CallTiming t;
  t.wall_ms = wall_s * 1e3;
  t.adjusted_ms = t.wall_ms;
  t.accounted = sched.valid;
  if (!t.accounted) return t;
  t.wait_ms = sched.wait_s * 1e3;
  t.cpu_ms = sched.run_s * 1e3;
  // The counters bracket the call a little more widely than the wall clock does (thaw to freeze).
  t.offcpu_ms = std::max(0.0, t.wall_ms - sched.busiest_run_s * 1e3);
  const double critical_wait_ms = sched.busiest_wait_s * 1e3;
  t.adjusted_ms =
      std::min(t.wall_ms, std::max(t.wall_ms - critical_wait_ms, t.cpu_ms / std::max(1, threads)));
  const double threshold = std::max(kDisturbedFloorMs, kDisturbedShare * t.wall_ms);
  // What the critical thread spent neither running nor waiting to run: blocked, or taken by the
  // hypervisor (a guest's run time leaves out steal).
  if (t.offcpu_ms - critical_wait_ms > threshold) {
    t.disturbed = kDisturbed;
  } else if (t.wait_ms > threshold || t.offcpu_ms > threshold) {
    t.disturbed = kWaited;
  }
  return t;
}

SpeedupEstimate estimate_speedup(std::span<const double> baseline_ms,
                                 std::span<const double> candidate_ms) {
  SpeedupEstimate e;
  e.half_width = kInfinity;
  const std::size_t n = std::min(baseline_ms.size(), candidate_ms.size());
  e.pairs = static_cast<int>(n);
  if (n == 0) return e;
  std::vector<double> ratios(n);
  for (std::size_t i = 0; i < n; ++i) ratios[i] = baseline_ms[i] / candidate_ms[i];
  e.speedup = median(ratios);
  e.ci95 = median_ci(ratios, 0.95);
  e.half_width = relative_half_width(e.ci95, e.speedup);
  return e;
}

SpeedupEstimate estimate_median(std::span<const double> ms) {
  SpeedupEstimate e;
  e.half_width = kInfinity;
  e.pairs = static_cast<int>(ms.size());
  if (ms.empty()) return e;
  e.speedup = median(ms);
  e.ci95 = median_ci(ms, 0.95);
  e.half_width = relative_half_width(e.ci95, e.speedup);
  return e;
}

OrderEffect order_effect(std::span<const double> baseline_ms,
                         std::span<const double> candidate_ms) {
  std::vector<double> base[2], cand[2];  // [0]: candidate-first pairs, [1]: baseline-first pairs
  const std::size_t n = std::min(baseline_ms.size(), candidate_ms.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int half = candidate_goes_first(i) ? 0 : 1;
    base[half].push_back(baseline_ms[i]);
    cand[half].push_back(candidate_ms[i]);
  }
  const SpeedupEstimate first = estimate_speedup(base[0], cand[0]);
  const SpeedupEstimate second = estimate_speedup(base[1], cand[1]);
  // Couples of neighbouring pairs, one of each order, so that drift between pairs cancels too.
  std::vector<double> carry;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (!candidate_goes_first(i) || candidate_goes_first(i + 1)) continue;
    carry.push_back((candidate_ms[i] * baseline_ms[i]) /
                    (candidate_ms[i + 1] * baseline_ms[i + 1]));
    ++i;
  }
  const SpeedupEstimate carried = estimate_median(carry);
  OrderEffect o;
  o.carryover = carried.speedup;
  o.carryover_ci95 = carried.ci95;
  o.couples = carried.pairs;
  o.candidate_first = first.speedup;
  o.candidate_first_ci95 = first.ci95;
  o.candidate_first_pairs = first.pairs;
  o.baseline_first = second.speedup;
  o.baseline_first_ci95 = second.ci95;
  o.baseline_first_pairs = second.pairs;
  o.split = second.speedup > 0 ? first.speedup / second.speedup : 0;
  return o;
}

bool carryover_beyond_chance(const OrderEffect& o) {
  if (o.couples == 0 || !(o.carryover > 0)) return false;
  const bool excludes_one = o.carryover_ci95.first > 1 || o.carryover_ci95.second < 1;
  return excludes_one && std::fabs(std::log(o.carryover)) > std::log1p(kMaxCarryover);
}

int claim_of(std::pair<double, double> ci95) {
  if (ci95.first > 1.0 + kClaimMargin) return 1;
  if (ci95.second < 1.0 - kClaimMargin) return -1;
  return 0;
}

SpeedupEstimate reported_estimate(const SpeedupEstimate& pooled,
                                  const std::optional<OrderEffect>& order) {
  if (!order || !carryover_beyond_chance(*order) || !(order->candidate_first > 0) ||
      !(order->baseline_first > 0))
    return pooled;
  const bool candidate_first_nearer =
      std::fabs(std::log(order->candidate_first)) <= std::fabs(std::log(order->baseline_first));
  SpeedupEstimate e = pooled;
  e.speedup = candidate_first_nearer ? order->candidate_first : order->baseline_first;
  e.ci95 = candidate_first_nearer ? order->candidate_first_ci95 : order->baseline_first_ci95;
  e.pairs = candidate_first_nearer ? order->candidate_first_pairs : order->baseline_first_pairs;
  e.half_width = (e.ci95.second - e.ci95.first) / 2 / e.speedup;
  return e;
}

double binomial_two_sided_p(int a, int b) {
  const int n = a + b;
  if (n == 0) return 1.0;
  const int k = std::min(a, b);
  // P(X <= k) for X ~ Binomial(n, 1/2), each term in log space so n in the thousands stays finite.
  double tail = 0.0;
  const double log_half_n = n * std::log(0.5);
  for (int i = 0; i <= k; ++i)
    tail += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                     log_half_n);
  return std::min(1.0, 2.0 * tail);
}

double coefficient_of_variation(std::span<const double> samples) {
  if (samples.size() < 2) return 0.0;
  const double m = mean(samples);
  return m != 0.0 ? stddev(samples) / m : 0.0;
}

std::string stop_reason(const StopRule& rule, int iters, double elapsed_s,
                        const SpeedupEstimate& estimate) {
  if (iters < rule.min_iters) return "";
  const bool too_soon_to_tell =
      elapsed_s < rule.min_seconds_near_one && excludes_one_narrowly(estimate.ci95);
  if (estimate.pairs >= kMinStablePairs && estimate.half_width <= rule.target_half_width &&
      !too_soon_to_tell)
    return "ci_target";
  if (iters >= rule.max_iters) return "max_iters";
  if (elapsed_s >= rule.time_budget_s) return "time_budget";
  return "";
}

NoiseReport noise_report(const SideCalls& candidate, const SideCalls& baseline,
                         const SpeedupEstimate& estimate, double steal_pct, bool accounted,
                         const std::optional<OrderEffect>& order) {
  NoiseReport n;
  n.order_effect = order;
  const bool paired = !candidate.wall_ms.empty();
  n.cv_candidate = coefficient_of_variation(candidate.wall_ms);
  n.cv_baseline = coefficient_of_variation(baseline.wall_ms);
  n.steal_pct = steal_pct;
  n.accounted = accounted;
  n.calls = static_cast<int>(candidate.wall_ms.size() + baseline.wall_ms.size());
  n.candidate_disturbed = count_if_at_least(candidate.disturbed, kWaited);
  n.baseline_disturbed = count_if_at_least(baseline.disturbed, kWaited);
  n.disturbed_calls = n.candidate_disturbed + n.baseline_disturbed;
  n.unadjustable_calls = count_if_at_least(candidate.disturbed, kDisturbed) +
                         count_if_at_least(baseline.disturbed, kDisturbed);
  // Pairs (calls, one-sided) with nothing disturbed, and with nothing beyond adjustment.
  int unadjustable_pairs = 0;
  for (std::size_t i = 0; i < baseline.disturbed.size(); ++i) {
    const std::uint8_t c = paired && i < candidate.disturbed.size() ? candidate.disturbed[i] : 0;
    const std::uint8_t b = baseline.disturbed[i];
    if (c == kClean && b == kClean) ++n.clean_pairs;
    if (c == kDisturbed || b == kDisturbed) ++unadjustable_pairs;
  }
  n.estimator = paired ? "median_pair_ratio_adjusted" : "median_adjusted";
  // The interval the result reports: the pooled one, or one order's where the orders differ.
  const SpeedupEstimate reported = reported_estimate(estimate, order);
  n.ci_half_width_pct = 100.0 * reported.half_width;

  // The first reason that applies, so the verdict can say in a few words why no claim is made.
  if (estimate.pairs < kMinStablePairs) {
    n.unstable_reason = "only " + std::to_string(estimate.pairs) + (paired ? " pairs" : " calls") +
                        " timed (need " + std::to_string(kMinStablePairs) + ")";
  } else if (paired &&
             binomial_two_sided_p(n.candidate_disturbed, n.baseline_disturbed) < kAsymmetryPValue) {
    n.unstable_reason = "disturbance hit one side: candidate " +
                        std::to_string(n.candidate_disturbed) + " calls, baseline " +
                        std::to_string(n.baseline_disturbed);
  } else if (unadjustable_pairs > kMaxUnadjustableShare * estimate.pairs) {
    n.unstable_reason = std::to_string(unadjustable_pairs) + " of " +
                        std::to_string(estimate.pairs) + (paired ? " pairs" : " calls") +
                        " lost time to steal or blocking";
  } else if (!(reported.half_width <= kMaxStableHalfWidth)) {
    n.unstable_reason = percent_text("CI half-width %.1f%% > %.0f%%", n.ci_half_width_pct,
                                     100 * kMaxStableHalfWidth);
  } else if (order && carryover_beyond_chance(*order) &&
             claim_of(order->candidate_first_ci95) != claim_of(order->baseline_first_ci95)) {
    n.unstable_reason = percent_text(
        "carry-over: pairs %.3fx as long with the candidate first as with the baseline first "
        "(speedup %.3fx",
        order->carryover, order->candidate_first);
    n.unstable_reason += percent_text(" against %.3fx)", order->baseline_first, 0);
    n.unstable_reason += " - the order of the calls decides the claim";
  }
  n.stable = n.unstable_reason.empty();
  return n;
}

const char* significance(const EvalResult& result) {
  if (!result.speedup || !result.speedup_ci95) return "";
  if (result.noise && !result.noise->stable) return "unstable";
  switch (claim_of(*result.speedup_ci95)) {
    case 1:
      return "faster";
    case -1:
      return "slower";
    default:
      return "no significant difference";
  }
}

void mark_too_short_near_one(EvalResult& paired, double timed_s) {
  if (!paired.speedup_ci95 || !paired.noise || !paired.noise->stable ||
      timed_s >= kMinSecondsNearOne)
    return;
  const std::pair<double, double> ci95 = *paired.speedup_ci95;
  if (claim_of(ci95) == 0 || !excludes_one_narrowly(ci95)) return;
  NoiseReport& n = *paired.noise;
  n.stable = false;
  n.unstable_reason =
      percent_text("the interval clears 1.0 by less than %.0f%% after %.2g s of timing",
                   100 * kNearOne, timed_s) +
      percent_text(" (such a difference needs %.0f s)", kMinSecondsNearOne, 0) +
      (n.stop_reason.empty() ? "" : ", stopped by " + n.stop_reason);
  paired.speedup_verdict = significance(paired);
}

void mark_baseline_drift(EvalResult& paired, double alone_ms) {
  if (!paired.speedup || !paired.noise || !paired.baseline || !(alone_ms > 0)) return;
  const double beside_ms = paired.baseline->median_ms;
  if (!(beside_ms > 0) ||
      std::fabs(std::log(beside_ms / alone_ms)) <= std::log1p(kMaxBaselineDrift) ||
      std::fabs(beside_ms - alone_ms) <= kBaselineDriftFloorMs)
    return;
  NoiseReport& n = *paired.noise;
  if (n.stable) {
    n.stable = false;
    n.unstable_reason = percent_text("the baseline took %.4g ms beside the candidate and %.4g ms",
                                     beside_ms, alone_ms) +
                        " alone: the machine changed between them";
  }
  paired.speedup_verdict = significance(paired);
}

}  // namespace kbench
