// `kbench validate`: what the suite's verdicts rest on, measured per workload. The baseline (fp32
// oracle and timed bf16 kernel) against the double-precision reference; the original program's bf16
// arithmetic (Workload::bf16_program) against the oracle on several seeds, which the rule must
// accept; the degenerate outputs (suite_checks.h), which it must reject, and the outputs of
// skipped inputs, which it must reject on most draws. Errors are reported as the fraction of the
// rule's bound used (below 1 passes).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "core/number_format.h"
#include "core/timer.h"
#include "harness/checker.h"
#include "harness/problem_instance.h"
#include "harness/suite_checks.h"
#include "workloads/registry.h"

namespace kbench::cli {
namespace {

struct Validation {
  const Workload* workload = nullptr;
  double baseline_f32 = 0, baseline_bf16 = 0;  // bound fractions against the reference
  double bf16_program = 0;                     // worst over the seeds, against the oracle
  bool has_bf16_program = false;
  double closest_degenerate = std::numeric_limits<double>::infinity();
  std::string closest_degenerate_name;
  std::vector<DrawDependentRate> draw_dependent;
  std::vector<std::string> failures;
  double seconds = 0;
};

Validation validate(const Workload& w, Size size, int seeds, int draws, std::uint64_t base_seed) {
  const double start = now_seconds();
  Validation v;
  v.workload = &w;
  ProblemInstance instance(w, size);
  const Problem& problem = instance.problem();
  const auto fail = [&](const std::string& what) { v.failures.push_back(what); };

  instance.generate(base_seed);
  const auto truth = to_f32(instance.run_trusted(w.reference, 1, KB_F32));
  const auto oracle = to_f32(instance.run_trusted(w.baseline, 1, KB_F32));
  const auto timed = to_f32(instance.run_trusted(w.baseline, 1, KB_BF16));
  const auto magnitudes = to_f32(instance.term_magnitudes(1));
  v.baseline_f32 = bound_fraction(oracle, truth, w.tolerance, magnitudes);
  v.baseline_bf16 = bound_fraction(timed, truth, w.tolerance, magnitudes);
  if (!check_outputs(problem, oracle, truth, w.tolerance, magnitudes).passed)
    fail("baseline (f32 oracle) disagrees with the reference");
  if (!check_outputs(problem, timed, truth, w.tolerance, magnitudes).passed)
    fail("baseline (bf16) disagrees with the reference");

  for (const DegenerateOutput& d : degenerate_outputs(problem, oracle, base_seed)) {
    const double fraction = bound_fraction(d.outputs, oracle, w.tolerance, magnitudes);
    if (fraction < v.closest_degenerate) {
      v.closest_degenerate = fraction;
      v.closest_degenerate_name = d.name;
    }
    if (check_outputs(problem, d.outputs, oracle, w.tolerance, magnitudes).passed)
      fail("the degenerate output '" + d.name + "' passes");
  }

  v.has_bf16_program = w.bf16_program != nullptr;
  if (!v.has_bf16_program) fail("no bf16 program");
  for (int s = 0; v.has_bf16_program && s < seeds; ++s) {
    if (s > 0) instance.generate(base_seed + static_cast<std::uint64_t>(s));
    const auto seed_oracle = s == 0 ? oracle : to_f32(instance.run_trusted(w.baseline, 1, KB_F32));
    const auto program = to_f32(instance.run_trusted(w.bf16_program, 1, KB_BF16));
    const auto seed_magnitudes = s == 0 ? magnitudes : to_f32(instance.term_magnitudes(1));
    v.bf16_program = std::max(v.bf16_program,
                              bound_fraction(program, seed_oracle, w.tolerance, seed_magnitudes));
    const CheckResult check =
        check_outputs(problem, program, seed_oracle, w.tolerance, seed_magnitudes);
    if (!check.passed)
      fail("bf16 program fails on seed " + std::to_string(base_seed + s) + ": " + check.detail);
  }

  // The bf16 program's last draw first, then seeds it did not use.
  v.draw_dependent =
      draw_dependent_rates(instance, draws, base_seed + static_cast<std::uint64_t>(seeds), 1);
  for (const DrawDependentRate& rate : v.draw_dependent) {
    if (passes_too_often(rate))
      fail("the output '" + rate.name + "' passes on " + std::to_string(rate.passed) + " of " +
           std::to_string(rate.draws) + " draws");
  }
  v.seconds = now_seconds() - start;
  return v;
}

// "2/24 without scale (at 0.7)": the draw-dependent output the rule passed most often; "0/24" where
// it passed none, "-" where the workload has none.
std::string most_passed_text(const Validation& v) {
  const auto most = std::max_element(
      v.draw_dependent.begin(), v.draw_dependent.end(),
      [](const DrawDependentRate& a, const DrawDependentRate& b) { return a.passed < b.passed; });
  if (most == v.draw_dependent.end()) return "-";
  const std::string share = std::to_string(most->passed) + "/" + std::to_string(most->draws);
  return most->passed == 0 ? share : share + " " + most->name;
}

std::string fraction_text(double f) {
  if (f == std::numeric_limits<double>::infinity()) return "inf";
  return f < 10 ? fixed(f, 3) : significant(f, 3);
}

}  // namespace

int validate_command(const ValidateOptions& options) {
  const Size size = size_or_usage_error(options.size);
  if (options.seeds < 1) throw UsageError("--seeds must be at least 1");
  const int draws =
      options.draws.value_or(size == Size::kSmoke ? kRateDrawsAtSmoke : kRateDrawsAboveSmoke);
  if (draws < 1) throw UsageError("--draws must be at least 1");
  std::vector<const Workload*> workloads;
  for (const std::string& id : options.workloads) workloads.push_back(&workload_or_usage_error(id));
  if (workloads.empty()) workloads.assign(all_workloads().begin(), all_workloads().end());
  const std::uint64_t base_seed = options.seed.value_or(std::random_device{}());

  std::vector<Validation> results;
  if (!options.json) {
    std::printf("kbench validate --size %s, seeds from %llu; bound fractions (< 1 passes)\n",
                size_name(size), static_cast<unsigned long long>(base_seed));
    std::printf("%-5s %9s %9s %9s %10s  %-24s %-32s %7s  %s\n", "id", "base/f32", "base/bf16",
                "bf16 prog", "degenerate", "(closest)", "skip passed (most often)", "s", "verdict");
  }
  int failed = 0;
  for (const Workload* w : workloads) {
    results.push_back(validate(*w, size, options.seeds, draws, base_seed));
    const Validation& v = results.back();
    failed += v.failures.empty() ? 0 : 1;
    if (options.json) continue;
    std::printf("%-5s %9s %9s %9s %10s  %-24s %-32s %7.2f  %s\n", std::string(w->id()).c_str(),
                fraction_text(v.baseline_f32).c_str(), fraction_text(v.baseline_bf16).c_str(),
                v.has_bf16_program ? fraction_text(v.bf16_program).c_str() : "-",
                fraction_text(v.closest_degenerate).c_str(), v.closest_degenerate_name.c_str(),
                most_passed_text(v).c_str(), v.seconds,
                v.failures.empty() ? "ok" : v.failures.front().c_str());
    std::fflush(stdout);
  }
  if (options.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const Validation& v : results) {
      const Tolerance& tol = v.workload->tolerance;
      nlohmann::json draw_dependent = nlohmann::json::array();
      for (const DrawDependentRate& rate : v.draw_dependent)
        draw_dependent.push_back({{"output", rate.name},
                                  {"draws", rate.draws},
                                  {"passed", rate.passed},
                                  {"closest_fraction", rate.closest}});
      all.push_back({{"workload", v.workload->name},
                     {"size", size_name(size)},
                     {"tolerance",
                      {{"atol", tol.atol},
                       {"rtol", tol.rtol},
                       {"max_rel_l2", tol.max_rel_l2},
                       {"term_rtol", tol.term_rtol}}},
                     {"baseline_f32_vs_reference", v.baseline_f32},
                     {"baseline_bf16_vs_reference", v.baseline_bf16},
                     {"bf16_program_vs_oracle", v.has_bf16_program ? nlohmann::json(v.bf16_program)
                                                                   : nlohmann::json(nullptr)},
                     {"closest_degenerate", v.closest_degenerate_name},
                     {"closest_degenerate_fraction", v.closest_degenerate},
                     {"draw_dependent", draw_dependent},
                     {"failures", v.failures},
                     {"seconds", v.seconds}});
    }
    std::cout << all.dump(2) << "\n";
  } else {
    std::printf("%zu workloads, %d failed\n", results.size(), failed);
  }
  if (failed > 0) {
    std::fprintf(stderr, "kbench: validate: %d of %zu workloads failed\n", failed, results.size());
    return 1;
  }
  return 0;
}

Subcommand add_validate_command(CLI::App& app) {
  auto validate = std::make_shared<ValidateOptions>();
  auto* validate_cmd = app.add_subcommand(
      "validate",
      "Check each baseline against its reference, each workload's bf16 program and degenerate "
      "outputs against its rule");
  add_workloads_option(validate_cmd, validate->workloads, "all");
  add_size_option(validate_cmd, validate->size);
  validate_cmd->add_option("--seeds", validate->seeds, "Input sets for the bf16 program")
      ->capture_default_str();
  validate_cmd->add_option(
      "--draws", validate->draws,
      "Input sets for the outputs of skipped inputs and token subsamples (default: " +
          std::to_string(kRateDrawsAtSmoke) + " at smoke size, " +
          std::to_string(kRateDrawsAboveSmoke) + " above)");
  add_seed_option(validate_cmd, validate->seed, "First seed (default: drawn fresh)");
  add_json_flag(validate_cmd, validate->json, "a JSON array");
  validate_cmd->footer(
      "Columns are fractions of the workload's tolerance used (below 1 passes): the baseline "
      "against the\nreference (f32 and bf16 outputs), the bf16 program against the oracle (worst "
      "seed), and the\ndegenerate output that came closest to passing (it must be above 1). Then "
      "the output computed\nwithout one input (or from a token subsample) that the rule passed "
      "most often, as passes/draws:\na draw can hide it, but it must fail on more than half of "
      "them. Exit 1 when any workload fails.");
  return {validate_cmd, [validate] { return validate_command(*validate); }};
}

}  // namespace kbench::cli
