// spread_library_calls: every call once, one thread each inside with the libraries held to it,
// the calls dealt by cost, failures passed on, and the recorder told; spread_contiguous_runs:
// every item once, in contiguous runs of near-equal length, one a thread.
#include "ops/spread_calls.h"

#include <cblas.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "ops/gemm.h"
#include "ops/library_calls.h"

namespace kbench::ops {
namespace {

// Sets the OpenMP budget for one test and restores it.
class Budget {
 public:
  explicit Budget(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~Budget() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(SpreadLibraryCalls, EveryCallOnceOnOneThreadEachWithTheLibrariesHeldToIt) {
  const Budget budget(2);
  const std::vector<double> costs = {5, 1, 1, 1, 1, 1, 3, 2};
  std::vector<std::atomic<int>> calls(costs.size());
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::vector<int> omp_budgets, blas_budgets;
  spread_library_calls(costs, [&](std::size_t i) {
    ++calls[i];
    const std::lock_guard lock(mutex);
    threads.insert(std::this_thread::get_id());
    omp_budgets.push_back(omp_get_max_threads());
    blas_budgets.push_back(openblas_get_num_threads());
  });
  for (const auto& c : calls) EXPECT_EQ(c.load(), 1);
  EXPECT_EQ(threads.size(), 2u);
  for (int b : omp_budgets) EXPECT_EQ(b, 1);
  for (int b : blas_budgets) EXPECT_EQ(b, 1);
  EXPECT_EQ(omp_get_max_threads(), 2);  // restored
  EXPECT_EQ(library_calls_spread_over(), 0);
}

TEST(SpreadLibraryCalls, DealsLargestFirstToTheLeastLoadedThread) {
  const Budget budget(2);
  // 6 | 3 + 2 + 1: the large call alone on one thread.
  const std::vector<double> costs = {1, 6, 2, 3};
  std::vector<int> thread_of(costs.size(), -1);
  spread_library_calls(costs, [&](std::size_t i) { thread_of[i] = omp_get_thread_num(); });
  EXPECT_NE(thread_of[1], thread_of[0]);
  EXPECT_EQ(thread_of[0], thread_of[2]);
  EXPECT_EQ(thread_of[2], thread_of[3]);
}

TEST(SpreadLibraryCalls, OneThreadOrOneCallRunsInOrderWithTheWholeBudget) {
  {
    const Budget budget(1);
    std::vector<std::size_t> order;
    spread_library_calls(std::vector<double>{1, 2, 3}, [&](std::size_t i) { order.push_back(i); });
    EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2}));
  }
  const Budget budget(2);
  int seen_budget = 0;
  spread_library_calls(std::vector<double>{1},
                       [&](std::size_t) { seen_budget = omp_get_max_threads(); });
  EXPECT_EQ(seen_budget, 2);
}

TEST(SpreadLibraryCalls, AFailingCallIsRethrownAfterTheOthersFinish) {
  const Budget budget(2);
  std::atomic<int> finished{0};
  EXPECT_THROW(spread_library_calls(std::vector<double>{1, 1, 1, 1},
                                    [&](std::size_t i) {
                                      if (i == 2) throw std::runtime_error("call 2");
                                      ++finished;
                                    }),
               std::runtime_error);
  EXPECT_EQ(omp_get_max_threads(), 2);
  EXPECT_EQ(library_calls_spread_over(), 0);
}

TEST(SpreadLibraryCalls, TheRecorderNotesOneThreadSpreadOverTheBudget) {
  const Budget budget(2);
  HostTensor a({"a", KB_BF16, {8, 16}}), b({"b", KB_BF16, {16, 4}});
  HostTensor c0({"c", KB_F32, {8, 4}}), c1({"c", KB_F32, {8, 4}});
  kb_tensor outputs[] = {c0.view(), c1.view()};
  start_recording_library_calls();
  spread_library_calls(std::vector<double>{1, 1}, [&](std::size_t i) {
    gemm(matrix_of(a.view()), matrix_of(b.view()), false, mutable_matrix_of(outputs[i]));
  });
  const std::vector<LibraryCall> calls = stop_recording_library_calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].count, 2);
  EXPECT_EQ(calls[0].gemm.threads, 1);
  EXPECT_EQ(calls[0].spread_over, 2);
}

TEST(SpreadContiguousRuns, EveryItemOnceInNearEqualRunsOneAThread) {
  const Budget budget(2);
  for (const std::int64_t count : {1, 2, 3, 7, 128}) {
    const std::size_t runs = contiguous_run_count(count);
    EXPECT_EQ(runs, count == 1 ? 1u : 2u) << count;
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
    std::vector<std::int64_t> first_of(runs, -1), end_of(runs, -1);
    std::vector<int> thread_of(runs, -1);
    spread_contiguous_runs(count, [&](std::size_t run, std::int64_t first, std::int64_t end) {
      ASSERT_LT(run, runs);
      first_of[run] = first;
      end_of[run] = end;
      thread_of[run] = omp_get_thread_num();
      for (std::int64_t i = first; i < end; ++i) ++seen[static_cast<std::size_t>(i)];
    });
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1) << count;
    EXPECT_EQ(first_of.front(), 0);
    EXPECT_EQ(end_of.back(), count);
    for (std::size_t r = 0; r < runs; ++r) {
      EXPECT_LE(end_of[r] - first_of[r], count / static_cast<std::int64_t>(runs) + 1) << count;
      if (r > 0) {
        EXPECT_EQ(first_of[r], end_of[r - 1]) << count;
        EXPECT_NE(thread_of[r], thread_of[r - 1]) << count;
      }
    }
  }
}

TEST(SpreadContiguousRuns, NoItemsCallsNothing) {
  const Budget budget(2);
  int calls = 0;
  spread_contiguous_runs(0, [&](std::size_t, std::int64_t, std::int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace kbench::ops
