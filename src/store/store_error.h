// The one exception the store throws.
#pragma once

#include <stdexcept>

namespace kbench {

// Any failure to open, migrate, read or write the store. The message names the database file and
// carries SQLite's own explanation ("file is not a database", "database is locked", ...).
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kbench
