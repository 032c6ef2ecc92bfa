#include "workloads/spec_text.h"

#include "workload_specs.h"

namespace kbench {

std::string_view spec_text(const Workload& w) {
  for (const workload_specs::Entry& entry : workload_specs::kAll)
    if (entry.name == w.name) return entry.spec;
  return {};
}

}  // namespace kbench
