// The baselines table of docs/baselines.md, written from a `kbench run`: per workload its size, the
// work, the baseline's time and path, where that sits on this machine's roofline, the XLA:CPU
// peer's time (scripts/xla-peer.sh --json) and the original's TPU time, under a header naming the
// machine.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "harness/eval_result.h"
#include "probe/probe.h"

namespace kbench::cli {

// The XLA:CPU peer's measurement of one workload (scripts/xla-peer.sh --json).
struct XlaTiming {
  double xla_median_ms = 0;
  // XLA's median over kbench's baseline median, both timed by the peer on the same core in
  // alternating rounds; 0 where the peer ran without the baseline (--no-baseline). On a shared
  // machine whose speed drifts by tens of percent over minutes, only such interleaved ratios mean
  // anything: dividing by a median taken minutes later does not.
  double xla_over_kbench = 0;
};

// The peer's timings per workload name, from the JSON array scripts/xla-peer.sh --json writes;
// entries of another size are left out. Throws std::runtime_error with a one-line message for an
// unreadable or malformed file.
std::map<std::string, XlaTiming> read_xla_times(const std::string& path, const std::string& size);

void write_baselines_markdown(std::ostream& os, const std::vector<EvalResult>& results,
                              const PeakReport& peaks, const std::map<std::string, XlaTiming>& xla,
                              const std::string& command);

}  // namespace kbench::cli
