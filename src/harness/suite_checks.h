// What the suite requires of every workload's tolerance, as values the tests and `kbench validate`
// share: the degenerate outputs a broken or gaming kernel would write, which the rule must reject,
// and how much of the rule's bound an output uses, which says how close a passing output came to
// failing and how far a failing one landed.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "harness/problem_instance.h"
#include "workloads/workload.h"

namespace kbench {

struct DegenerateOutput {
  std::string name;                         // "zeros", "ones", "oracle mean", ...
  std::vector<std::vector<float>> outputs;  // one value vector per output, in declared dtypes
};

// From the oracle's values (one vector per output of `problem`): all zeros, all ones, the oracle's
// mean (not for scalar outputs, where it is the oracle), the oracle with its rows rotated by one
// (rows: slabs along the first axis of extent above one), and the oracle plus Gaussian noise at 5%
// of its RMS (drawn from `seed`; outputs of fewer than 16 values are moved by exactly 5% of their
// RMS instead). Values of bf16 outputs are rounded to bf16, as a kernel writing them would hold
// them.
std::vector<DegenerateOutput> degenerate_outputs(const Problem& problem,
                                                 const std::vector<std::vector<float>>& oracle,
                                                 std::uint64_t seed);

// The oracle of the inputs `instance` drew last, with one input at a time set to its typical value
// (core/input_gen.h: a normal's mean, a uniform's midpoint): what a kernel writes that skips a
// bias, a norm's affine parameter or the random part of a weight, the work of an input the rule
// cannot see being free to drop. One output, named "without <input> (at <value>)", for each input
// drawn from a distribution, except the workload's cancelled_inputs and inputs_below_rule; values
// of bf16 outputs rounded to bf16. `only_cancelled` gives the cancelled ones instead.
std::vector<DegenerateOutput> skipped_input_outputs(ProblemInstance& instance, int threads,
                                                    bool only_cancelled = false);

// How often the rule passes an output whose distance from the oracle is a matter of the draw:
// each of skipped_input_outputs and the workload's token-subsample estimate. Such an output can
// sit inside the rule on a draw that happens to hide it (25k's beta acts only through mean(beta),
// a mean of 24 normals that is sometimes near zero), so whether the rule rejects it on one draw is
// the wrong question; an evaluation checks every call on fresh inputs, at least kMinCheckedDraws
// of them (harness/checker.h), and a kernel that writes it escapes only if every one hides it.
struct DrawDependentRate {
  std::string name;  // as DegenerateOutput names it
  int draws = 0;
  int passed = 0;                                            // draws on which the rule accepted it
  double closest = std::numeric_limits<double>::infinity();  // least bound fraction over the draws
};

// The share of draws the rule may pass such an output on: at half, a kernel writing it escapes 8
// checked draws with probability 1/256 at most (the rates measured are far lower: 43k's output
// without its scale passes on 12% of smoke draws and 17% of cpu draws, 0.17^8 = 7e-7; a kernel
// that skips real work, as 32k's did before its draws changed, passes on every draw). A lower
// share would make `kbench validate`, whose draws are fresh, fail on an honest rule by chance.
constexpr double kMaxDrawDependentPassShare = 0.5;
bool passes_too_often(const DrawDependentRate& rate);

// The draws `kbench validate` and suite_test take to measure those rates: at the smoke size the
// suite's 24 draws take about 2 s; above it each draw costs every workload's oracle again (~30 s
// of CPU over the suite at the cpu size), so validate takes 8 there.
constexpr int kRateDrawsAtSmoke = 24;
constexpr int kRateDrawsAboveSmoke = 8;

// Each draw-dependent output's rate over `draws` input sets, each compared with its own oracle:
// the inputs `instance` holds, then sets drawn from next_seed, next_seed + 1, ... Leaves
// `instance` holding the last.
std::vector<DrawDependentRate> draw_dependent_rates(ProblemInstance& instance, int draws,
                                                    std::uint64_t next_seed, int threads);

// The fraction of the tolerance an output uses, over all outputs: the larger of the worst
// |out - oracle| / (atol + rtol * |oracle| + term_rtol * magnitude) and rel_l2 / max_rel_l2. Below
// 1 passes (given finite values); infinity for a non-finite mismatch or a value-count mismatch.
// `magnitudes`: each output's term magnitudes (Workload::term_magnitude), or empty for none.
double bound_fraction(const std::vector<std::vector<float>>& outputs,
                      const std::vector<std::vector<float>>& oracle, const Tolerance& tol,
                      const std::vector<std::vector<float>>& magnitudes = {});

}  // namespace kbench
