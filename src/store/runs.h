// What may join a run, the rule results (store.cc) and agent samples (agent_samples.cc) share:
// only an open run, and only once per entry. Called inside the writer's transaction.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace kbench {

// Throws StoreError "database '…': run N <why>".
[[noreturn]] void refuse_run(sqlite3* db, std::int64_t run_id, const std::string& why);

// Refuses (as above) unless run `run_id` exists and is not complete.
void require_open_run(sqlite3* db, std::int64_t run_id);

}  // namespace kbench
