#include "cli/timing_options.h"

#include <cmath>
#include <string>

#include "cli/shared_options.h"
#include "harness/noise.h"

namespace kbench::cli {

void add_timing_options(CLI::App* command, TimingOptions& options, const std::string& step,
                        const std::string& scope) {
  add_size_option(command, options.size);
  command->add_option("--threads", options.threads, "Threads (cores the kernels are pinned to)")
      ->capture_default_str();
  command->add_option("--warmup", options.warmup, "Untimed " + step + scope + " before timing")
      ->capture_default_str();
  // Paired timing waits longer for a speedup's CI near 1.0.
  const std::string near_one =
      step == "pairs" ? " (and, where it excludes 1.0 by less than " +
                            std::to_string(std::lround(100 * kNearOne)) + "%, " +
                            std::to_string(std::lround(kMinSecondsNearOne)) + " s have passed)"
                      : "";
  command
      ->add_option("--iters", options.iters,
                   "Minimum timed " + step + scope +
                       "; timing goes on until the 95% CI is within 2%" + near_one +
                       ", the time budget is spent or --max-iters is reached")
      ->capture_default_str();
  command->add_option("--max-iters", options.max_iters, "Maximum timed " + step + scope)
      ->capture_default_str();
  command
      ->add_option("--time-budget-s", options.time_budget_s,
                   "Seconds of timing" + scope + " (warmup included) after which no new " + step +
                       " start, once --iters are timed")
      ->capture_default_str();
  add_seed_option(command, options.seed,
                  "Base seed (default: drawn fresh), to reproduce a verdict");
}

}  // namespace kbench::cli
