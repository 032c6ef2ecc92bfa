#include "ops/spread_calls.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <numeric>
#include <vector>

#include "ops/library_threads.h"

namespace kbench::ops {
namespace {

std::atomic<int> g_spread_over{0};

// Each thread's calls: largest first to the least loaded thread (LPT), within 4/3 of the best
// split.
std::vector<std::vector<std::size_t>> deal(std::span<const double> costs, int threads) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<std::vector<std::size_t>> dealt(static_cast<std::size_t>(threads));
  std::vector<double> load(static_cast<std::size_t>(threads), 0.0);
  for (std::size_t i : order) {
    const auto least =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    dealt[least].push_back(i);
    load[least] += costs[i];
  }
  return dealt;
}

}  // namespace

void spread_library_calls(std::span<const double> costs,
                          const std::function<void(std::size_t)>& call) {
  const int budget = omp_get_max_threads();
  const int threads = static_cast<int>(
      std::min<std::size_t>(costs.size(), static_cast<std::size_t>(std::max(budget, 1))));
  if (threads <= 1 || omp_in_parallel()) {
    for (std::size_t i = 0; i < costs.size(); ++i) call(i);
    return;
  }
  const std::vector<std::vector<std::size_t>> dealt = deal(costs, threads);
  std::exception_ptr failure;
  {
    // The budget of the threads inside the region, which inherit it: one each, OpenBLAS's
    // process-wide pool included.
    const LibraryThreads one(1);
    g_spread_over.store(threads);
#pragma omp parallel num_threads(threads)
    {
      try {
        for (std::size_t i : dealt[static_cast<std::size_t>(omp_get_thread_num())]) call(i);
      } catch (...) {
#pragma omp critical(spread_library_calls_failure)
        if (!failure) failure = std::current_exception();
      }
    }
    g_spread_over.store(0);
  }
  if (failure) std::rethrow_exception(failure);
}

std::size_t contiguous_run_count(std::int64_t count) {
  return static_cast<std::size_t>(std::clamp<std::int64_t>(omp_get_max_threads(), 1, count));
}

void spread_contiguous_runs(
    std::int64_t count,
    const std::function<void(std::size_t run, std::int64_t first, std::int64_t end)>& body) {
  if (count <= 0) return;
  const std::size_t runs = contiguous_run_count(count);
  const auto start_of = [&](std::size_t run) {
    return static_cast<std::int64_t>(run) * count / static_cast<std::int64_t>(runs);
  };
  std::vector<double> lengths(runs);
  for (std::size_t r = 0; r < runs; ++r)
    lengths[r] = static_cast<double>(start_of(r + 1) - start_of(r));
  spread_library_calls(lengths,
                       [&](std::size_t run) { body(run, start_of(run), start_of(run + 1)); });
}

int library_calls_spread_over() {
  return g_spread_over.load(std::memory_order_relaxed);
}

}  // namespace kbench::ops
