// The store's tables, and the migrations that bring any earlier file up to them.
#pragma once

struct sqlite3;

namespace kbench::schema {

// The schema this kbench writes (PRAGMA user_version); store.h describes the tables.
constexpr int kVersion = 4;

int user_version(sqlite3* db);
// Brings the database to kVersion in one write transaction (a no-op when it is there); refuses a
// newer schema with StoreError.
void migrate(sqlite3* db);

}  // namespace kbench::schema
