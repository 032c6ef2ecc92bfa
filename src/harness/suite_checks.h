// What the suite requires of every workload's tolerance, as values the tests and `kbench validate`
// share: the degenerate outputs a broken or gaming kernel would write, which the rule must reject,
// and how much of the rule's bound an output uses, which says how close a passing output came to
// failing and how far a failing one landed.
#pragma once

#include <cstdint>
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

// Every output the rule must reject for the inputs `instance` drew last, whose baseline in f32 gave
// `oracle`: degenerate_outputs, the workload's token-subsample estimate where it has one, and
// skipped_input_outputs. What suite_test and `kbench validate` check alike.
std::vector<DegenerateOutput> outputs_to_reject(ProblemInstance& instance,
                                                const std::vector<std::vector<float>>& oracle,
                                                std::uint64_t seed, int threads);

// The fraction of the tolerance an output uses, over all outputs: the larger of the worst
// |out - oracle| / (atol + rtol * |oracle| + term_rtol * magnitude) and rel_l2 / max_rel_l2. Below
// 1 passes (given finite values); infinity for a non-finite mismatch or a value-count mismatch.
// `magnitudes`: each output's term magnitudes (Workload::term_magnitude), or empty for none.
double bound_fraction(const std::vector<std::vector<float>>& outputs,
                      const std::vector<std::vector<float>>& oracle, const Tolerance& tol,
                      const std::vector<std::vector<float>>& magnitudes = {});

}  // namespace kbench
