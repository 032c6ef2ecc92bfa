#include "store/sqlite.h"

namespace kbench::sqlite {

std::string db_label(sqlite3* db) {
  const char* file = sqlite3_db_filename(db, "main");
  return file && *file ? file : ":memory:";
}

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
  throw StoreError("database '" + db_label(db) + "': " + std::string(what) + ": " +
                   sqlite3_errmsg(db));
}

// Enough of a statement to tell which one failed, on one line: a whole INSERT or migration would
// make an error message a screenful.
std::string sql_excerpt(std::string_view sql) {
  constexpr std::size_t kMaxChars = 48;
  std::string text;
  for (const char c : sql) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (text.empty() || text.back() == ' ')) continue;
    text += space ? ' ' : c;
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

void exec(sqlite3* db, const std::string& sql) {
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    fail(db, sql_excerpt(sql));
}

std::int64_t Row::insert_into(sqlite3* db, const std::string& table) const {
  std::string columns, parameters;
  for (const auto& [column, value] : values_) {
    if (!columns.empty()) {
      columns += ", ";
      parameters += ", ";
    }
    columns += column;
    parameters += ":" + column;
  }
  const std::string sql = "INSERT INTO " + table + " (" + columns + ") VALUES (" + parameters + ")";
  Statement insert(db, sql.c_str());
  for (const auto& [column, value] : values_) {
    const std::string name = ":" + column;
    if (const auto* integer = std::get_if<std::int64_t>(&value))
      insert.bind_int(name.c_str(), *integer);
    else if (const auto* real = std::get_if<double>(&value))
      insert.bind_double(name.c_str(), *real);
    else if (const auto* text = std::get_if<std::string>(&value))
      insert.bind_text(name.c_str(), *text);
    else
      insert.bind_null(name.c_str());
  }
  insert.run();
  return sqlite3_last_insert_rowid(db);
}

}  // namespace kbench::sqlite
