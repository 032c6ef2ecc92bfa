// `kbench check`: outputs computed by another framework, read from .npy files and judged against
// the fp32 oracle by the same rule as `kbench eval`, recorded in the store like an evaluation.
#include <filesystem>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "core/environment.h"
#include "harness/interop.h"

namespace kbench::cli {

int check_command(const CheckOptions& options) {
  const Workload& w = workload_or_usage_error(options.workload);
  const Size size = size_or_usage_error(options.size);
  std::error_code ec;
  if (!std::filesystem::is_directory(options.outputs, ec))
    throw UsageError("--outputs '" + options.outputs + "' is not a directory");
  std::optional<std::uint64_t> seed = options.seed;
  if (!seed) {
    const ExportedSeed exported = exported_seed(options.outputs, w, size);
    if (!exported.seed)
      throw UsageError("give --seed N, the seed the inputs were exported with: " +
                       exported.why_not);
    seed = exported.seed;
  }

  // Open the store first: a bad --db must fail before the oracle is computed, not after.
  std::optional<ResultStore> store;
  if (!options.no_record) store.emplace(open_store(options.db));
  EvalResult result = check_output_files(w, size, *seed, options.outputs);
  if (store) result.id = store->record(result, current_environment());

  print_result(result, options.json);
  return 0;
}

Subcommand add_check_command(CLI::App& app) {
  auto check = std::make_shared<CheckOptions>();
  auto* check_cmd = app.add_subcommand(
      "check",
      "Check outputs computed elsewhere (.npy) against the oracle, by the rule of `kbench eval`");
  add_workload_option(check_cmd, check->workload);
  add_size_option(check_cmd, check->size, "as exported");
  add_seed_option(check_cmd, check->seed,
                  "Seed the inputs were exported with (default: the seed in DIR/workload.json)");
  check_cmd->add_option("--outputs", check->outputs, "Directory holding the output files")
      ->type_name("DIR")
      ->required();
  add_json_flag(check_cmd, check->json, "the result as one JSON object");
  add_no_record_flag(check_cmd, check->no_record, "the result");
  add_db_option(check_cmd, check->db);
  check_cmd->footer(
      kbench::output_naming_rules() +
      "\nA missing or malformed file gets the verdict 'incorrect' (exit 0), like wrong values.\n"
      "See docs/interop.md.");
  return {check_cmd, [check] { return check_command(*check); }};
}

}  // namespace kbench::cli
