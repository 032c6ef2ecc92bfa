// The loop analysis of a correct sample (src/analysis, as its result records it) put the way a
// model reads feedback: which loops take the cycles, what bounds each, and the sample's own source
// lines they come from, so that the next round knows which loop to change and why.
#pragma once

#include <cstddef>
#include <string>

namespace kbench::agents {

// `analysis_json` is EvalResult::analysis_json: an analysis (analysis::to_json) or {"error": why}.
// `code` is the analyzed source, whose lines the hottest loops quote. At most `top` loops; empty
// for an empty `analysis_json`.
std::string loop_feedback(const std::string& analysis_json, const std::string& code,
                          std::size_t top = 3);

}  // namespace kbench::agents
