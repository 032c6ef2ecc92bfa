#include "store/snapshot.h"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "store/store_error.h"

namespace kbench {
namespace {

class Connection {
 public:
  Connection(const std::string& path, int flags) {
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw StoreError("database '" + path + "': cannot open: " + message);
    }
    sqlite3_busy_timeout(db_, 10000);
  }
  ~Connection() { sqlite3_close(db_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

[[noreturn]] void fail(const std::string& to, const std::string& what) {
  std::string message = "database '";
  message += to;
  message += "': ";
  message += what;
  throw StoreError(message);
}

}  // namespace

void snapshot_database(const std::string& from, const std::string& to) {
  const std::string partial = to + ".partial";
  std::error_code ec;
  std::filesystem::remove(partial, ec);
  {
    const Connection source(from, SQLITE_OPEN_READONLY);
    const Connection target(partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    sqlite3_backup* backup = sqlite3_backup_init(target.get(), "main", source.get(), "main");
    if (!backup) fail(to, "cannot copy '" + from + "': " + sqlite3_errmsg(target.get()));
    // All pages in one step: the copy is one read transaction on the source, so a writer still at
    // work on it cannot leave the copy half old, half new.
    const int rc = sqlite3_backup_step(backup, -1);
    sqlite3_backup_finish(backup);
    if (rc != SQLITE_DONE) {
      std::filesystem::remove(partial, ec);
      fail(to, "cannot copy '" + from + "': " + sqlite3_errstr(rc));
    }
    // One self-contained file, without a write-ahead log beside it: a copy moves between disks and
    // nodes, and opening it to read must not leave -wal and -shm files next to it.
    if (sqlite3_exec(target.get(), "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr) !=
        SQLITE_OK) {
      std::filesystem::remove(partial, ec);
      fail(to, std::string("cannot finish the copy: ") + sqlite3_errmsg(target.get()));
    }
  }
  std::filesystem::rename(partial, to, ec);
  if (ec) {
    std::filesystem::remove(partial, ec);
    fail(to, "cannot replace it: " + ec.message());
  }
}

}  // namespace kbench
