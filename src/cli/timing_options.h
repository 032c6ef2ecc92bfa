// The registration of the timing options eval, run and calibrate share (TimingOptions,
// cli/commands.h); timed_eval_options() (cli/context.h) checks and applies them.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace kbench::cli {

// Registers --size, --threads, --warmup, --iters, --max-iters, --time-budget-s and --seed on
// `command`. `step` names what one timed step is ("pairs": candidate and baseline; "calls": a
// baseline alone) and `scope` what the numbers are per ("" for one evaluation, " per workload").
void add_timing_options(CLI::App* command, TimingOptions& options, const std::string& step,
                        const std::string& scope);

}  // namespace kbench::cli
