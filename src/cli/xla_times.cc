// Reads scripts/xla-peer.sh --json's output. Apart from the table it feeds, so that its fuzz target
// (tests/fuzz) links nothing but this file.
#include "cli/xla_times.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace kbench::cli {

std::map<std::string, XlaTiming> read_xla_times(const std::string& path, const std::string& size) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read XLA timings '" + path + "'");
  nlohmann::json rows;
  try {
    rows = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("XLA timings '" + path + "' are not JSON: " + e.what());
  }
  if (!rows.is_array()) throw std::runtime_error("XLA timings '" + path + "' are not a JSON array");
  std::map<std::string, XlaTiming> times;
  for (const auto& row : rows) {
    if (!row.is_object() || !row.contains("workload") || !row.contains("xla_median_ms") ||
        !row["workload"].is_string() || !row["xla_median_ms"].is_number())
      throw std::runtime_error("XLA timings '" + path +
                               "': each entry needs a workload and an xla_median_ms");
    // row.value() would throw nlohmann's type_error, naming neither the file nor the key.
    const auto entry_size = row.find("size");
    if (entry_size != row.end() && !entry_size->is_string())
      throw std::runtime_error("XLA timings '" + path + "': an entry's size must be a string");
    if (row.value("size", size) != size) continue;
    XlaTiming& t = times[row["workload"].get<std::string>()];
    t.xla_median_ms = row["xla_median_ms"].get<double>();
    if (row.contains("xla_over_kbench") && row["xla_over_kbench"].is_number())
      t.xla_over_kbench = row["xla_over_kbench"].get<double>();
  }
  return times;
}

}  // namespace kbench::cli
