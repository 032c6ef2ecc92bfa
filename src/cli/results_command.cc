// `kbench results`: recent records from the store as a table, JSON or CSV.
#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "store/result_json.h"
#include "store/sinks.h"

namespace kbench::cli {
namespace {

// One record as `kbench eval` printed it (the verdict with its diagnostics, or the JSON object with
// every timing sample), or its CSV row: for a record that the table's one line does not explain.
int show_record(const ResultStore& store, std::int64_t id, Format format) {
  const std::optional<EvalResult> record = store.result_by_id(id);
  if (!record)
    throw UsageError("no record " + std::to_string(id) + " in " + store.path() +
                     " (kbench results lists the ids)");
  if (format == Format::kCsv)
    write_results(std::cout, std::span(&*record, 1), format);
  else
    print_result(*record, format == Format::kJson);
  return 0;
}

}  // namespace

int results_command(const ResultsOptions& options) {
  const std::optional<Format> named = parse_format(options.format);
  if (!named) throw UsageError("unknown format '" + options.format + "' (table, json or csv)");
  // "table" is also the default, so only csv contradicts --json.
  if (options.json && *named == Format::kCsv)
    throw UsageError("--json and --format csv exclude each other");
  const Format format = options.json ? Format::kJson : *named;
  if (!options.workload.empty()) workload_or_usage_error(options.workload);
  // SQLite reads a negative LIMIT as none: -n -5 would have listed every record.
  if (options.limit < 0) throw UsageError("--limit must be at least 0");
  if (options.id && *options.id < 1) throw UsageError("--id takes a record's id, 1 or more");
  const std::array<std::string_view, 4> kinds = {"eval", "run", "check", "calibrate"};
  if (!options.kind.empty() && std::find(kinds.begin(), kinds.end(), options.kind) == kinds.end())
    throw UsageError("unknown kind '" + options.kind + "' (eval, run, check or calibrate)");
  if (!options.status.empty() && !parse_status(options.status))
    throw UsageError("unknown status '" + options.status +
                     "' (correct, incorrect, compile_error, runtime_error, timeout or rejected)");
  ResultStore store = open_store_for_reading(options.db);
  if (options.id) return show_record(store, *options.id, format);
  ResultStore::Filter filter;
  if (!options.workload.empty())
    filter.workload = std::string(workload_or_usage_error(options.workload).name);
  if (!options.kind.empty()) filter.kind = options.kind;
  if (!options.status.empty()) filter.status = options.status;
  const std::vector<EvalResult> results = store.recent(options.limit, filter);
  write_results(std::cout, results, format, {.include_samples = false, .include_source = false});
  return 0;
}

Subcommand add_results_command(CLI::App& app) {
  auto results = std::make_shared<ResultsOptions>();
  auto* results_cmd = app.add_subcommand("results", "Show recent records from the database");
  auto* limit = results_cmd->add_option("--limit,-n", results->limit, "How many (newest first)")
                    ->capture_default_str();
  auto* workload =
      results_cmd->add_option("--workload,-w", results->workload, "Only this workload");
  auto* kind = results_cmd->add_option("--kind", results->kind,
                                       "Only 'eval', 'run', 'check' or 'calibrate' records");
  auto* status = results_cmd->add_option(
      "--status", results->status,
      "Only records of this status (correct, incorrect, compile_error, runtime_error, timeout, "
      "rejected)");
  results_cmd
      ->add_option("--id", results->id,
                   "Only this record, whole: its verdict as `kbench eval` printed it, diagnostics "
                   "included (--json: with every timing sample)")
      ->excludes(limit)
      ->excludes(workload)
      ->excludes(kind)
      ->excludes(status);
  results_cmd->add_option("--format", results->format, "table, json or csv")->capture_default_str();
  results_cmd->add_flag("--json", results->json, "Same as --format json");
  add_db_option(results_cmd, results->db);
  return {results_cmd, [results] { return results_command(*results); }};
}

}  // namespace kbench::cli
