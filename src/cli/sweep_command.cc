// `kbench sweep`: a matrix of cells (workloads x what to do) run by an executor, each cell writing
// its own shard database under --out; `kbench sweep status DIR` reads where it stands, and `kbench
// merge` makes one database of the shards (docs/cluster.md).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "cli/shared_options.h"
#include "cli/sweep.h"
#include "cli/timing_options.h"
#include "core/number_format.h"
#include "experts/expert.h"
#include "sweep/cell_files.h"
#include "workloads/registry.h"

namespace kbench::cli {
namespace {

// Letters, digits, '.', '-' and '_' survive; anything else in a cell's name (a model's '/' or ':')
// becomes '_', so the name is a file name.
std::string file_safe(const std::string& text) {
  std::string out;
  for (char c : text)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return out;
}

std::vector<std::string> timing_args(const TimingOptions& t) {
  std::vector<std::string> args = {"--size",          t.size,
                                   "--threads",       std::to_string(t.threads),
                                   "--warmup",        std::to_string(t.warmup),
                                   "--iters",         std::to_string(t.iters),
                                   "--max-iters",     std::to_string(t.max_iters),
                                   "--time-budget-s", significant(t.time_budget_s, 17)};
  if (t.seed) args.insert(args.end(), {"--seed", std::to_string(*t.seed)});
  return args;
}

void add_cell(sweep::Plan& plan, std::string name, std::vector<std::string> args) {
  plan.cells.push_back({file_safe(name), std::move(args)});
}

void add_agent_cells(sweep::Plan& plan, const SweepOptions& o, const Workload& w) {
  if (o.methods.empty()) throw UsageError("--agent needs at least one --method");
  if (o.models.empty()) throw UsageError("--agent needs at least one --model");
  base_url_or_usage_error("--base-url", o.base_url);
  std::vector<std::optional<std::uint64_t>> seeds(o.seeds.begin(), o.seeds.end());
  if (seeds.empty()) seeds.push_back(std::nullopt);
  for (const std::string& method : o.methods)
    for (const std::string& model : o.models)
      for (const std::optional<std::uint64_t>& seed : seeds) {
        std::vector<std::string> args = {"agent",
                                         "--method",
                                         method,
                                         "-w",
                                         std::string(w.name),
                                         "--model",
                                         model,
                                         "--samples",
                                         std::to_string(o.samples),
                                         "--size",
                                         o.timing.size,
                                         "--threads",
                                         std::to_string(o.timing.threads),
                                         "--provider",
                                         o.provider};
        if (!o.base_url.empty()) args.insert(args.end(), {"--base-url", o.base_url});
        if (!o.api_key_env.empty()) args.insert(args.end(), {"--api-key-env", o.api_key_env});
        if (seed) args.insert(args.end(), {"--seed", std::to_string(*seed)});
        add_cell(plan,
                 "agent-" + method + "-" + model + "-" + std::string(w.name) +
                     (seed ? "-seed" + std::to_string(*seed) : ""),
                 std::move(args));
      }
}

int submit_sweep(const SweepOptions& options) {
  if (options.out.empty()) throw UsageError("give the sweep's directory with --out DIR");
  if (options.executor != "local" && options.executor != "slurm")
    throw UsageError("unknown executor '" + options.executor + "' (local or slurm)");
  if (options.max_parallel < 0) throw UsageError("--max-parallel must be 0 or more");
  const std::filesystem::path dir = options.out;
  sweep::Plan plan = sweep_plan(options);
  std::error_code ec;
  if (std::filesystem::exists(dir / "sweep.json", ec)) {
    const sweep::Plan existing = plan_or_usage_error(dir);
    if (!sweep::same_cells(existing, plan))
      throw UsageError("'" + options.out +
                       "' holds another sweep (other cells or command lines); give a new --out");
    plan = existing;  // its attempt limit stands
  } else {
    sweep::write_plan(dir, plan);
  }
  std::filesystem::create_directories(dir / "logs", ec);
  std::filesystem::create_directories(dir / "shards", ec);

  std::vector<int> todo;
  int done = 0, running = 0, failed = 0;
  for (std::size_t i = 0; i < plan.cells.size(); ++i) {
    const sweep::CellStatus s =
        sweep::cell_status(sweep::CellFiles(dir, plan.cells[i]), plan.max_attempts);
    switch (s.state) {
      case sweep::CellState::kDone:
        ++done;
        break;
      case sweep::CellState::kRunning:
        ++running;
        break;
      case sweep::CellState::kFailed:
        ++failed;
        std::fprintf(stderr, "kbench: cell %s failed %d times, not run again: %s\n",
                     plan.cells[i].name.c_str(), s.failures, s.line.c_str());
        break;
      case sweep::CellState::kPending:
        todo.push_back(static_cast<int>(i));
        break;
    }
  }
  std::fprintf(stderr, "kbench: sweep %s: %zu cells, %d done, %d running, %d failed, %zu to run\n",
               options.out.c_str(), plan.cells.size(), done, running, failed, todo.size());
  if (todo.empty()) return failed > 0 ? 1 : 0;
  if (options.executor == "local")
    return run_local(dir, plan, todo, std::max(1, options.max_parallel));

  const std::filesystem::path script = dir / "sweep.sbatch";
  {
    std::ofstream out(script, std::ios::trunc);
    out << sweep::batch_script(options.slurm, dir, self_executable(), todo);
    if (!out.flush()) throw std::runtime_error("cannot write '" + script.string() + "'");
  }
  const std::string job = sweep::submit(options.slurm, script);
  std::printf(
      "submitted %zu cells as Slurm job %s; `kbench sweep status %s` shows where they are\n",
      todo.size(), job.c_str(), options.out.c_str());
  return 0;
}

}  // namespace

sweep::Plan plan_or_usage_error(const std::filesystem::path& dir) {
  try {
    return sweep::read_plan(dir);
  } catch (const sweep::SweepError& e) {
    throw UsageError(e.what());
  }
}

sweep::Plan sweep_plan(const SweepOptions& options) {
  if (options.agent && options.tune) throw UsageError("--agent and --tune exclude each other");
  if (options.max_attempts < 1) throw UsageError("--max-attempts must be at least 1");
  if (options.slurm.cpus_per_task < 1) throw UsageError("--cpus-per-task must be at least 1");
  size_or_usage_error(options.timing.size);
  // Checked here, not only by each cell: a bad value would otherwise fail every cell after the
  // sweep was submitted. --threads is the cells' machines' to judge.
  seconds_or_usage_error("--time-budget-s", options.timing.time_budget_s, 0, kLongestBudgetS);
  sweep::Plan plan;
  plan.max_attempts = options.max_attempts;
  for (const Workload* w : selected_workloads(options.workloads, options.suite)) {
    const std::string name(w->name);
    if (options.agent) {
      add_agent_cells(plan, options, *w);
    } else if (options.tune) {
      // Only workloads with an expert have something to tune.
      if (!experts::find_expert(experts::default_experts_dir(), *w)) continue;
      add_cell(plan, "tune-" + name,
               {"tune", "-w", name, "--size", options.timing.size, "--threads",
                std::to_string(options.timing.threads)});
    } else {
      std::vector<std::string> args = {"run", "-w", name};
      for (std::string& a : timing_args(options.timing)) args.push_back(std::move(a));
      if (options.no_experts) args.push_back("--no-experts");
      add_cell(plan, "run-" + name, std::move(args));
    }
  }
  if (plan.cells.empty())
    throw UsageError("the sweep has no cells (no workload has an expert to tune?)");
  return plan;
}

Subcommand add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run a matrix of cells (workloads x baselines, agents or tuning), each into its own "
      "shard database, on this machine or as a Slurm array job");
  cmd->require_subcommand(0, 1);
  add_workloads_option(cmd, o->workloads, "the suite");
  cmd->add_option("--suite", o->suite, "all, production or kernelbench")->capture_default_str();
  add_timing_options(cmd, o->timing, "calls", " per workload");
  cmd->add_flag("--no-experts", o->no_experts, "Baseline cells: no expert kernels beside them");
  cmd->add_flag("--agent", o->agent, "Agent cells: workloads x --method x --model x --agent-seed");
  cmd->add_option("--method", o->methods, "Agent method (repeatable)");
  cmd->add_option("--model", o->models, "Agent model (repeatable)");
  cmd->add_option("--agent-seed", o->seeds, "Agent sampling seed (repeatable)")
      ->transform(seed_validator());
  cmd->add_option("--samples", o->samples, "Agent samples per workload")->capture_default_str();
  cmd->add_option("--provider", o->provider, "Agent provider")->capture_default_str();
  cmd->add_option("--base-url", o->base_url, "Agent provider's base URL");
  cmd->add_option("--api-key-env", o->api_key_env, "Variable holding the provider's API key");
  cmd->add_flag("--tune", o->tune, "Tuning cells: each expert's grid search (kbench tune)");
  cmd->add_option("--out", o->out, "The sweep's directory (plan, attempts, logs, shards/)")
      ->type_name("DIR");
  cmd->add_option("--executor", o->executor, "local or slurm")->capture_default_str();
  cmd->add_option("--max-parallel", o->max_parallel,
                  "Cells at once (local: processes on this machine; slurm: array tasks)")
      ->capture_default_str();
  cmd->add_option("--max-attempts", o->max_attempts,
                  "Failures after which a cell is reported and not run again")
      ->capture_default_str();
  cmd->add_option("--partition", o->slurm.partition, "Slurm partition");
  cmd->add_option("--cpus-per-task", o->slurm.cpus_per_task, "Slurm CPUs per cell")
      ->capture_default_str();
  cmd->add_flag("--exclusive", o->slurm.exclusive, "Slurm: whole nodes per cell");
  cmd->add_option("--time", o->slurm.time, "Slurm time limit per cell");
  cmd->add_option("--sbatch-arg", o->slurm.sbatch_args, "Passed to sbatch as it is (repeatable)")
      ->allow_extra_args(false);
  cmd->footer(
      "Resubmitting into the same --out runs only the cells not done; then: kbench merge "
      "OUT DIR/shards/*.db");

  struct StatusOptions {
    std::string dir;
    bool json = false;
  };
  auto status = std::make_shared<StatusOptions>();
  auto* status_cmd = cmd->add_subcommand("status", "Cells done, running, failed and pending");
  // By position, or as --out, before or after `status`, as the sweep was made.
  status_cmd->add_option("dir,--out", status->dir, "The sweep's directory");
  add_json_flag(status_cmd, status->json, "one JSON object");

  struct CellOptions {
    std::string dir;
    int index = 0;
  };
  auto cell = std::make_shared<CellOptions>();
  auto* cell_cmd =
      cmd->add_subcommand("cell", "Run one cell of a sweep (what each executor's task runs)");
  cell_cmd->group("");  // an executor's, not a person's
  cell_cmd->add_option("dir", cell->dir, "The sweep's directory")->required();
  cell_cmd->add_option("index", cell->index, "The cell's index in sweep.json")->required();

  return {cmd, [=] {
            if (*status_cmd) {
              const std::string dir = status->dir.empty() ? o->out : status->dir;
              if (dir.empty())
                throw UsageError("give the sweep's directory: kbench sweep status DIR");
              return sweep_status(dir, status->json);
            }
            if (*cell_cmd) return run_sweep_cell(cell->dir, cell->index);
            o->slurm.max_parallel = o->max_parallel;
            return submit_sweep(*o);
          }};
}

}  // namespace kbench::cli
