// Registry over workloads.inc: an explicit array rather than static registration, which static
// libraries can silently drop.
#include "workloads/registry.h"

#include <array>

#include "workloads/workloads.h"

namespace kbench {

namespace {
#define KBENCH_WORKLOAD(symbol) &symbol,
constexpr std::array kWorkloads = {
#include "workloads/workloads.inc"
};
#undef KBENCH_WORKLOAD
}  // namespace

std::span<const Workload* const> all_workloads() {
  return kWorkloads;
}

const Workload* find_workload(std::string_view id_or_name) {
  for (const Workload* w : kWorkloads)
    if (w->id() == id_or_name || w->name == id_or_name) return w;
  return nullptr;
}

}  // namespace kbench
