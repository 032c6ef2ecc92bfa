// `kbench results`: recent records from the store as a table, JSON or CSV.
#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "store/result_json.h"
#include "store/sinks.h"

namespace kbench::cli {

int results_command(const ResultsOptions& options) {
  const auto format =
      options.json ? std::optional<Format>(Format::kJson) : parse_format(options.format);
  if (!format) throw UsageError("unknown format '" + options.format + "' (table, json or csv)");
  if (!options.workload.empty()) workload_or_usage_error(options.workload);
  // SQLite reads a negative LIMIT as none: -n -5 would have listed every record.
  if (options.limit < 0) throw UsageError("--limit must be at least 0");
  const std::array<std::string_view, 4> kinds = {"eval", "run", "check", "calibrate"};
  if (!options.kind.empty() && std::find(kinds.begin(), kinds.end(), options.kind) == kinds.end())
    throw UsageError("unknown kind '" + options.kind + "' (eval, run, check or calibrate)");
  ResultStore store = open_store_for_reading(options.db);
  std::optional<std::string> workload, kind;
  if (!options.workload.empty())
    workload = std::string(workload_or_usage_error(options.workload).name);
  if (!options.kind.empty()) kind = options.kind;
  const std::vector<EvalResult> results = store.recent(options.limit, workload, kind);
  write_results(std::cout, results, *format, {.include_samples = false, .include_source = false});
  return 0;
}

Subcommand add_results_command(CLI::App& app) {
  auto results = std::make_shared<ResultsOptions>();
  auto* results_cmd = app.add_subcommand("results", "Show recent records from the database");
  results_cmd->add_option("--limit,-n", results->limit, "How many (newest first)")
      ->capture_default_str();
  results_cmd->add_option("--workload,-w", results->workload, "Only this workload");
  results_cmd->add_option("--kind", results->kind,
                          "Only 'eval', 'run', 'check' or 'calibrate' records");
  results_cmd->add_option("--format", results->format, "table, json or csv")->capture_default_str();
  results_cmd->add_flag("--json", results->json, "Same as --format json");
  add_db_option(results_cmd, results->db);
  return {results_cmd, [results] { return results_command(*results); }};
}

}  // namespace kbench::cli
