// Every workload's definition, declared from the one list, workloads.inc. Each workload file
// includes this before defining its own: the declaration gives the definition external linkage
// (a namespace-scope const has internal linkage otherwise), and a definition whose name the list
// lacks keeps internal linkage, unused, which -Wunused-const-variable rejects at compile time; a
// listed name no file defines fails at link time.
#pragma once

#include "workloads/workload.h"

namespace kbench {

#define KBENCH_WORKLOAD(symbol) extern const Workload symbol;
#include "workloads/workloads.inc"
#undef KBENCH_WORKLOAD

}  // namespace kbench
