// The one explicit list of workloads (workloads.inc), shared by the CLI, the harness and the tests.
#pragma once

#include <span>
#include <string_view>

#include "workloads/workload.h"

namespace kbench {

std::span<const Workload* const> all_workloads();

// Accepts the full name ("8p_GEMM") or the short id ("8p"); nullptr when unknown.
const Workload* find_workload(std::string_view id_or_name);

}  // namespace kbench
