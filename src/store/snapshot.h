// A consistent copy of a SQLite database that may still be written: what a sweep's cell keeps of
// each attempt and publishes as its shard.
#pragma once

#include <string>

namespace kbench {

// Copies the database at `from` to `to` with SQLite's online backup (one consistent view, the
// write-ahead log included), written beside `to` and renamed over it: a reader of `to` sees the
// old copy or the whole new one, never a part. Throws StoreError naming the file on failure.
void snapshot_database(const std::string& from, const std::string& to);

}  // namespace kbench
