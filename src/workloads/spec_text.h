// The operator a workload computes, as its file's header states it: the Operator, Inputs, Params
// and Output sections, embedded at build time. `kbench scaffold` prints it and an agent's prompt
// carries it, so a kernel writer reads the semantics where the reference implements them.
#pragma once

#include <string_view>

#include "workloads/workload.h"

namespace kbench {

// The statement for `w`, lines ending in '\n'; empty where there is none (specs.cmake fails the
// build on a workload file without one, and suite_test checks that each of the fifty has one).
std::string_view spec_text(const Workload& w);

}  // namespace kbench
