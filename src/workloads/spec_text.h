// The operator a workload computes, as its file's header states it: the Operator, Inputs, Params
// and Output sections, embedded at build time. `kbench scaffold` prints it and an agent's prompt
// carries it, so a kernel writer reads the semantics where the reference implements them.
#pragma once

#include <string_view>

#include "workloads/workload.h"

namespace kbench {

// The statement for `w`, lines ending in '\n'; empty for a workload whose file has none (the
// build fails on a workload file without one, so only a workload defined elsewhere, in a test).
std::string_view spec_text(const Workload& w);

}  // namespace kbench
