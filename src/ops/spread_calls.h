// Many independent library calls, each too small to split well, spread over the thread budget with
// one thread per call: the grouped GEMMs of a mixture of experts or a grouped matmul. Handing each
// such call the whole budget instead costs a fork and join per call, and a GEMM of a hundred rows
// split in two barely gains (on the AMX Xeon 11p's sixteen group GEMMs took as long at two threads
// as at one, and some runs four times longer). This is what a framework's grouped-GEMM op does
// when it has no batched call for groups of different sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace kbench::ops {

// Runs call(i) for every i in [0, costs.size()): over the library thread budget (OpenMP's), each
// call on one thread with every library inside it held to that thread, the calls dealt out
// largest first to the least loaded thread. The calls must write disjoint outputs. With a budget
// of one thread, or a single call, they run in order on the calling thread with the whole budget.
// The first exception a call throws is rethrown here once every thread has finished.
void spread_library_calls(std::span<const double> costs,
                          const std::function<void(std::size_t)>& call);

// The runs spread_contiguous_runs splits `count` items into: one per thread of the budget, no more
// than there are items, at least one.
std::size_t contiguous_run_count(std::int64_t count);

// Splits [0, count) into contiguous_run_count(count) runs of near-equal length and runs
// body(run, first, end) for each, spread as spread_library_calls spreads its calls. For items
// too cheap to deal out one by one (attention heads, tiles of positions) or that reuse
// per-thread scratch: `run` indexes that scratch, sized by contiguous_run_count beforehand.
void spread_contiguous_runs(
    std::int64_t count,
    const std::function<void(std::size_t run, std::int64_t first, std::int64_t end)>& body);

// The threads the library calls now running are spread over, or 0 outside
// spread_library_calls (the library-call recorder notes it).
int library_calls_spread_over();

}  // namespace kbench::ops
