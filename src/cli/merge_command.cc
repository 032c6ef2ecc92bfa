// `kbench merge OUT SHARD...`: a sweep's shard databases into one, for `kbench results` and `kbench
// agent report` over the whole sweep. Every shard is checked before the first is merged, so a
// refused shard leaves OUT untouched; each shard then goes in with one transaction of its own, and
// merging it again adds nothing (store.h, ResultStore::merge_shard).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"

namespace kbench::cli {
namespace {

struct MergeOptions {
  std::string out;
  std::vector<std::string> shards;
};

int merge_command(const MergeOptions& options) {
  if (options.shards.empty()) throw UsageError("give at least one shard database to merge");
  try {
    for (const std::string& shard : options.shards) ResultStore::check_shard(shard);
  } catch (const StoreError& e) {
    throw UsageError(std::string(e.what()) + "; nothing was merged");
  }
  ResultStore out = open_store(options.out);
  int runs = 0, present = 0, results = 0, samples = 0, incomplete = 0;
  for (const std::string& shard : options.shards) {
    const ResultStore::ShardMerge m = out.merge_shard(shard);
    std::printf("%s: %d runs added (%d already merged), %d results, %d agent samples%s\n",
                shard.c_str(), m.runs_added, m.runs_present, m.results_added, m.agent_samples_added,
                m.results_present > 0
                    ? (", " + std::to_string(m.results_present) + " results already merged").c_str()
                    : "");
    for (const std::string& run : m.incomplete)
      std::printf("  left out, never completed: %s\n", run.c_str());
    runs += m.runs_added;
    present += m.runs_present;
    results += m.results_added;
    samples += m.agent_samples_added;
    incomplete += static_cast<int>(m.incomplete.size());
  }
  std::printf(
      "%s: %d runs, %d results, %d agent samples added from %zu shards; %d runs already "
      "there, %d incomplete runs left out\n",
      out.path().c_str(), runs, results, samples, options.shards.size(), present, incomplete);
  return 0;
}

}  // namespace

Subcommand add_merge_command(CLI::App& app) {
  auto options = std::make_shared<MergeOptions>();
  auto* cmd = app.add_subcommand(
      "merge", "Merge shard databases (a sweep's) into one: complete runs, results, agent samples");
  cmd->add_option("out", options->out, "The database merged into (created when missing)")
      ->required();
  cmd->add_option("shards", options->shards, "Shard databases")->required();
  cmd->footer(
      "Ids are renumbered; what OUT already holds is not copied again; runs that never completed "
      "are left out and listed.");
  return {cmd, [options] { return merge_command(*options); }};
}

}  // namespace kbench::cli
