// The SQLite C API as the store uses it: statements and transactions that clean up after
// themselves, errors as StoreError naming the file, and rows inserted by naming each column once.
#pragma once

#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "store/store_error.h"

namespace kbench::sqlite {

// The file `db` is open on (":memory:" for none), for messages: with several stores (tests, --db)
// "database is locked" alone does not say which.
std::string db_label(sqlite3* db);
// Throws StoreError: the file, `what` was being done, and SQLite's message.
[[noreturn]] void fail(sqlite3* db, std::string_view what);
// Enough of a statement to tell which one failed, on one line.
std::string sql_excerpt(std::string_view sql);
// Runs fixed SQL (schema, pragmas, BEGIN/COMMIT); anything carrying data goes through Statement.
void exec(sqlite3* db, const std::string& sql);

// One prepared statement with named parameters (":workload"), finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      fail(db, "preparing statement");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind_text(const char* name, std::string_view text) {
    // A null data pointer would bind SQL NULL; an empty string_view may carry one.
    const char* data = text.data() ? text.data() : "";
    check(sqlite3_bind_text64(stmt_, index(name), data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
          name);
  }
  void bind_int(const char* name, std::int64_t value) {
    check(sqlite3_bind_int64(stmt_, index(name), value), name);
  }
  // NaN becomes NULL (SQLite has no NaN); infinities are stored as such.
  void bind_double(const char* name, double value) {
    if (std::isnan(value)) return bind_null(name);
    check(sqlite3_bind_double(stmt_, index(name), value), name);
  }
  void bind_double(const char* name, const std::optional<double>& value) {
    if (value) return bind_double(name, *value);
    bind_null(name);
  }
  void bind_null(const char* name) { check(sqlite3_bind_null(stmt_, index(name)), name); }
  // Not an overload of bind_text: a std::string argument would convert to both parameter types.
  void bind_text_or_null(const char* name, const std::optional<std::string>& text) {
    if (text) return bind_text(name, *text);
    bind_null(name);
  }

  // True while a row is available; false when done.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, "executing '" + sql_excerpt(sqlite3_sql(stmt_)) + "'");
  }
  void run() {
    while (step()) {
    }
  }
  void reset() { sqlite3_reset(stmt_); }

  std::int64_t column_int(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool column_is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  double column_double(int column) const {
    if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nan("");
    return sqlite3_column_double(stmt_, column);
  }
  // A column's value as it is, for copying a row between databases (bind_value takes it).
  sqlite3_value* column_value(int column) const { return sqlite3_column_value(stmt_, column); }
  // Binds parameter `index` (1-based) to `value`, whatever its type.
  void bind_value(int index, const sqlite3_value* value) {
    check(sqlite3_bind_value(stmt_, index, value), "a copied value");
  }
  std::string column_text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text ? std::string(text, sqlite3_column_bytes(stmt_, column)) : std::string();
  }

 private:
  int index(const char* name) const {
    const int i = sqlite3_bind_parameter_index(stmt_, name);
    if (i == 0) {
      throw StoreError(std::string("database: no parameter ") + name + " in '" +
                       sqlite3_sql(stmt_) + "'");
    }
    return i;
  }
  void check(int rc, const char* name) const {
    if (rc != SQLITE_OK) fail(db_, std::string("binding ") + name);
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN on construction; ROLLBACK on scope exit unless commit() succeeded. Exceptions, early
// returns and a failed COMMIT all leave the database as it was.
class Transaction {
 public:
  Transaction(sqlite3* db, const char* begin) : db_(db) { exec(db, begin); }
  ~Transaction() {
    // SQLite rolls back by itself after some errors (SQLITE_FULL, IOERR, ...); autocommit then is
    // on again and a second ROLLBACK would only fail.
    if (!committed_ && !sqlite3_get_autocommit(db_)) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit() {
    exec(db_, "COMMIT");
    committed_ = true;
  }

 private:
  sqlite3* db_;
  bool committed_ = false;
};

// The values of one row, each under its column's name: insert_into() writes the INSERT from them,
// so a table's columns are listed once, where their values are given.
class Row {
 public:
  Row& text(std::string_view column, std::string_view value) {
    values_.emplace_back(std::string(column), std::string(value));
    return *this;
  }
  Row& integer(std::string_view column, std::int64_t value) {
    values_.emplace_back(std::string(column), value);
    return *this;
  }
  Row& integer(std::string_view column, const std::optional<std::int64_t>& value) {
    if (value) return integer(column, *value);
    return null(column);
  }
  // NaN and a missing value become NULL (SQLite has no NaN); infinities are stored as such.
  Row& real(std::string_view column, double value) {
    if (std::isnan(value)) return null(column);
    values_.emplace_back(std::string(column), value);
    return *this;
  }
  Row& real(std::string_view column, const std::optional<double>& value) {
    if (value) return real(column, *value);
    return null(column);
  }
  Row& null(std::string_view column) {
    values_.emplace_back(std::string(column), std::monostate());
    return *this;
  }
  // Inserts the row into `table` and returns its rowid.
  std::int64_t insert_into(sqlite3* db, const std::string& table) const;

 private:
  using Value = std::variant<std::monostate, std::int64_t, double, std::string>;
  std::vector<std::pair<std::string, Value>> values_;
};

}  // namespace kbench::sqlite
