#include "analysis/confined_steps.h"

#include <algorithm>

namespace kbench::analysis {

void record_step(std::vector<ConfinedStep>& steps, const std::string& step,
                 const SandboxReport& sandbox) {
  const auto known = std::find_if(steps.begin(), steps.end(),
                                  [&](const ConfinedStep& s) { return s.step == step; });
  if (known == steps.end()) {
    steps.push_back({step, 1, sandbox});
    return;
  }
  ++known->runs;
  // A layer counts only where every run had it: one unconfined run is what an attack needs.
  std::erase_if(known->sandbox.layers, [&](const std::string& layer) {
    return std::find(sandbox.layers.begin(), sandbox.layers.end(), layer) == sandbox.layers.end();
  });
  for (const std::string& refusal : sandbox.missing)
    if (std::find(known->sandbox.missing.begin(), known->sandbox.missing.end(), refusal) ==
        known->sandbox.missing.end())
      known->sandbox.missing.push_back(refusal);
}

nlohmann::json to_json(const std::vector<ConfinedStep>& steps) {
  nlohmann::json j = nlohmann::json::array();
  for (const ConfinedStep& s : steps)
    j.push_back({{"step", s.step},
                 {"runs", s.runs},
                 {"layers", s.sandbox.layers},
                 {"missing", s.sandbox.missing}});
  return j;
}

std::string to_text(const std::vector<ConfinedStep>& steps) {
  if (steps.empty()) return "";
  std::string text = "sandbox:";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ConfinedStep& s = steps[i];
    text += (i == 0 ? " " : ", ") + s.step + " (";
    if (s.runs > 1) text += std::to_string(s.runs) + " runs, ";
    const std::size_t layers = s.sandbox.layers.size();
    text += std::to_string(layers) + (layers == 1 ? " layer)" : " layers)");
  }
  text += "\n";
  for (const ConfinedStep& s : steps)
    for (const std::string& refusal : s.sandbox.missing)
      text += "! " + s.step + " ran without " + refusal + "\n";
  return text;
}

}  // namespace kbench::analysis
