#include "store/runs.h"

#include "store/sqlite.h"
#include "store/store_error.h"

namespace kbench {

void refuse_run(sqlite3* db, std::int64_t run_id, const std::string& why) {
  throw StoreError("database '" + sqlite::db_label(db) + "': run " + std::to_string(run_id) + " " +
                   why);
}

void require_open_run(sqlite3* db, std::int64_t run_id) {
  sqlite::Statement run(db, "SELECT completed_at IS NOT NULL FROM runs WHERE id = :id");
  run.bind_int(":id", run_id);
  if (!run.step()) refuse_run(db, run_id, "does not exist");
  if (run.column_int(0) != 0) refuse_run(db, run_id, "is already complete");
}

}  // namespace kbench
