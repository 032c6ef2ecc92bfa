#include "cli/shared_options.h"

#include <charconv>
#include <limits>
#include <system_error>

namespace kbench::cli {

void add_workload_option(CLI::App* command, std::string& workload) {
  command->add_option("--workload,-w", workload, "Workload id or name")->required();
}

void add_workloads_option(CLI::App* command, std::vector<std::string>& workloads,
                          const std::string& when_none) {
  command->add_option("--workload,-w", workloads,
                      "Workload ids or names (repeatable; default: " + when_none + ")");
}

void add_size_option(CLI::App* command, std::string& size, const std::string& what_for) {
  const std::string help = "smoke, cpu or full";
  command->add_option("--size", size, what_for.empty() ? help : help + ": " + what_for)
      ->capture_default_str();
}

void add_db_option(CLI::App* command, std::string& db) {
  command->add_option(
      "--db", db,
      "Results database (default: $KBENCH_DB, else kbench/results.db in the XDG data home)");
}

void add_no_record_flag(CLI::App* command, bool& no_record, const std::string& what) {
  command->add_flag("--no-record", no_record, "Do not write " + what + " to the database");
}

CLI::Validator seed_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const bool digits_only = !text.empty() && text.find_first_not_of("0123456789") == text.npos;
        if (!digits_only ||
            std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc()) {
          return "'" + text + "' is not a seed (a decimal number from 0 to " +
                 std::to_string(std::numeric_limits<std::uint64_t>::max()) + ")";
        }
        text = std::to_string(value);  // decimal, whatever CLI11 would make of a leading 0
        return "";
      },
      "SEED");
}

void add_seed_option(CLI::App* command, std::optional<std::uint64_t>& seed,
                     const std::string& help) {
  command->add_option("--seed", seed, help)->transform(seed_validator());
}

void add_json_flag(CLI::App* command, bool& json, const std::string& what) {
  command->add_flag("--json", json, "Print " + what);
}

}  // namespace kbench::cli
