// The baselines table of docs/baselines.md, written from a `kbench run`: per workload its size, the
// work, the baseline's time and path, where that sits on this machine's roofline, the XLA:CPU
// peer's time (scripts/xla-peer.sh --json) and the original's TPU time, under a header naming the
// machine.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/xla_times.h"
#include "harness/eval_result.h"
#include "probe/probe.h"

namespace kbench::cli {

void write_baselines_markdown(std::ostream& os, const std::vector<EvalResult>& results,
                              const PeakReport& peaks, const std::map<std::string, XlaTiming>& xla,
                              const std::string& command);

}  // namespace kbench::cli
