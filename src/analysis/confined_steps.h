// The steps of an analysis that compiled, simulated or ran the candidate's text, each with the
// confinement it had, so that `kbench analyze` is never silently less confined than `kbench eval`
// (docs/security.md): a layer this machine refused shows in the report, not only as a failure.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/eval_result.h"

namespace kbench::analysis {

struct ConfinedStep {
  std::string step;  // "assembly build", "llvm-mca", "instrumented build", "instrumented run", ...
  int runs = 1;      // llvm-mca runs once a loop
  // Named as `kbench eval` records them. Over several runs: the layers every run had, and every
  // refusal any run met.
  SandboxReport sandbox;
};

// Adds a run of `step` to `steps`, merged into the step's entry where it has one.
void record_step(std::vector<ConfinedStep>& steps, const std::string& step,
                 const SandboxReport& sandbox);

// [{step, runs, layers, missing}, ...] in the order the steps first ran.
nlohmann::json to_json(const std::vector<ConfinedStep>& steps);

// "sandbox: assembly build (4 layers), llvm-mca (3 runs, 4 layers), ...\n", then a line
// "! <step> ran without <layer>: <why>" for each refusal.
std::string to_text(const std::vector<ConfinedStep>& steps);

}  // namespace kbench::analysis
