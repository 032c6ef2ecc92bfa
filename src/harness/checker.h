// The correctness rule of `kbench eval`, as one pure function over f32 values, so the same code
// judges candidates, baselines in tests and outputs imported from other frameworks.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "harness/eval_result.h"
#include "kbench/kernel.h"
#include "workloads/workload.h"

namespace kbench {

// The fewest fresh input sets a candidate's outputs are compared on before it is called correct
// (correctness trials and timed calls together), whatever the options: some wrong outputs pass
// the rule on a draw that hides them (a dropped input that acts through a mean), on at most half
// of the draws by the suite's own check (kMaxDrawDependentPassShare, harness/suite_checks.h), so
// a kernel writing one escapes 8 draws with probability 1/256 at most.
constexpr int kMinCheckedDraws = 8;

struct CheckResult {
  bool passed = false;
  double max_abs_err = 0;
  double max_rel_err =
      0;  // over elements whose |oracle| > atol (relative error of tiny values means little)
  double rel_l2_err =
      0;  // ||out - oracle|| / ||oracle|| (0 when both are 0; inf when only oracle is 0)
  std::string detail;  // empty when passed; else the first failed rule and the worst element
};

// Compares `out` against `oracle` (n values each) under `tol`. `tensor_name` appears in `detail`.
// `magnitude` (n values, or null for none) is each element's term magnitude, which tol.term_rtol
// multiplies into the element's bound (Workload::term_magnitude); without it that part of the bound
// is zero: the rule at its strictest.
CheckResult check_close(const float* out, const float* oracle, std::size_t n, const Tolerance& tol,
                        const std::string& tensor_name, const float* magnitude = nullptr);

// The same rule on two tensors of any element types, read where they lie (bf16 and i32 widened to
// f32 value by value, exactly as to_f32 does): the evaluator checks every timed output this way
// without materializing f32 copies. Same numbers as check_close on to_f32 of both, up to the
// rounding of the summation order in rel_l2_err (blocks of eight lanes; last bits only). A shape
// mismatch (element count) fails with a detail saying so.
CheckResult check_close(const kb_tensor& out, const kb_tensor& oracle, const Tolerance& tol,
                        const std::string& tensor_name, const kb_tensor* magnitude = nullptr);

// check_outputs over tensors: outputs[i] against oracle[i] by the tensor check_close above, with
// magnitudes[i] (f32) when `magnitudes` is not empty.
CheckResult check_outputs(const Problem& problem, std::span<const kb_tensor> outputs,
                          std::span<const kb_tensor> oracle, const Tolerance& tol,
                          std::span<const kb_tensor> magnitudes = {});

// The rule for a whole call: check_close on every output of `problem` (outputs[i] against
// oracle[i], f32 values in the declared shape's order), merged worst-case: the largest errors, and
// the detail of the first output that fails. An output whose value count differs from its oracle's
// fails with a detail saying so. `magnitudes`, when not empty, holds each output's term magnitudes.
CheckResult check_outputs(const Problem& problem, const std::vector<std::vector<float>>& outputs,
                          const std::vector<std::vector<float>>& oracle, const Tolerance& tol,
                          const std::vector<std::vector<float>>& magnitudes = {});

// What a timed call's outputs are held to when the baseline's do not vouch for them: the oracle of
// its inputs and their term magnitudes (empty for none), computed only then.
struct OracleOfInputs {
  std::vector<HostTensor> oracle, magnitudes;
};

// The check of a timed call, whose oracle is not computed in advance: its outputs against the
// baseline's outputs for the same inputs under half the rule (bit-identical outputs pass at memcmp
// speed), else against oracle_of_inputs() under the rule itself, as the correctness trials are.
// Half, because the baseline's own bf16 output uses up to about half the rule against the
// reference (17p 0.53 and 12p 0.42 at the smoke size): an output within half the rule of it is
// within about the whole rule of the oracle, where one within the whole rule of it could be half
// as far again. And never only the baseline's: a faithful candidate can be further from the
// baseline's output than the rule allows of the oracle (12p's original arithmetic, summed in
// another order, two bf16 steps from it on 1 cpu-size input set in 16).
CheckResult check_timed_outputs(const Problem& problem, std::span<const kb_tensor> outputs,
                                std::span<const kb_tensor> baseline, const Tolerance& tol,
                                const std::function<OracleOfInputs()>& oracle_of_inputs);

// Folds one call's check into a report over several input sets: the worst errors so far, and the
// first failure's detail. Leaves `passed` and `trials` to the caller.
void merge_check(CorrectnessReport& report, const CheckResult& check);

// The rule in one line of text, with `tol`'s numbers, for people and for exported workloads.
std::string rule_text(const Tolerance& tol);

}  // namespace kbench
