// Where `kbench agent report` gets its samples: the store's agent samples of some runs.
#pragma once

#include <cstdint>
#include <vector>

#include "agents/sample.h"
#include "store/store.h"

namespace kbench::agents {

// The stored samples of `run_ids` (every agent run when empty), through
// ResultStore::agent_samples. Throws StoreError.
std::vector<AgentSample> load_agent_samples(ResultStore& store,
                                            const std::vector<std::int64_t>& run_ids);

}  // namespace kbench::agents
