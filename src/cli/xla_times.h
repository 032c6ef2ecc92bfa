// The XLA:CPU peer's timings (scripts/xla-peer.sh --json), read for docs/baselines.md's table.
#pragma once

#include <map>
#include <string>

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

}  // namespace kbench::cli
