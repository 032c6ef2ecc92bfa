#include "cli/shared_options.h"

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

void add_json_flag(CLI::App* command, bool& json, const std::string& what) {
  command->add_flag("--json", json, "Print " + what);
}

}  // namespace kbench::cli
