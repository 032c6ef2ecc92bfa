// A baseline's time, split: the recorder times each library call from inside the run, and
// measure_breakdown's parts are those calls; and every baseline hands the library its whole
// thread budget (a call made from inside a parallel region gets one thread of it), or spreads
// independent calls over it, one thread each.
#include "harness/breakdown.h"

#include <omp.h>

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "harness/problem_instance.h"
#include "ops/library_calls.h"
#include "workloads/registry.h"

namespace kbench {
namespace {

int threads_of(const ops::LibraryCall& call) {
  return call.kind == ops::LibraryCall::Kind::kGemm ? call.gemm.threads : call.conv.threads;
}

TEST(ThreadBudget, EveryBaselineGivesTheLibraryAllItsThreads) {
  constexpr int kThreads = 2;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(kThreads);
  int calls_seen = 0;
  for (const Workload* w : all_workloads()) {
    ProblemInstance instance(*w, Size::kSmoke);
    instance.generate(3);
    ops::start_recording_library_calls();
    instance.run_trusted(w->baseline, kThreads, KB_BF16);
    for (const ops::LibraryCall& call : ops::stop_recording_library_calls()) {
      SCOPED_TRACE(std::string(w->name) + ": " + call.key());
      if (call.spread_over > 0) {
        // Calls spread over the budget, one thread each.
        EXPECT_EQ(call.spread_over, kThreads);
        EXPECT_EQ(threads_of(call), 1);
      } else {
        EXPECT_EQ(threads_of(call), kThreads);
        EXPECT_FALSE(call.in_parallel_region);
      }
      ++calls_seen;
    }
  }
  omp_set_num_threads(saved);
  EXPECT_GT(calls_seen, 0);
}

TEST(ThreadBudget, ACallFromInsideAParallelRegionIsMarked) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  HostTensor a({"a", KB_BF16, {4, 8}}), b({"b", KB_BF16, {8, 3}});
  HostTensor c0({"c", KB_F32, {4, 3}}), c1({"c", KB_F32, {4, 3}});
  kb_tensor outputs[] = {c0.view(), c1.view()};
  ops::start_recording_library_calls();
#pragma omp parallel for num_threads(2)
  for (int i = 0; i < 2; ++i)
    ops::gemm(ops::matrix_of(a.view()), ops::matrix_of(b.view()), false,
              ops::mutable_matrix_of(outputs[i]));
  const std::vector<ops::LibraryCall> calls = ops::stop_recording_library_calls();
  omp_set_num_threads(saved);
  ASSERT_FALSE(calls.empty());
  bool marked = false;
  for (const ops::LibraryCall& call : calls) marked |= call.in_parallel_region;
  EXPECT_TRUE(marked);
}

TEST(Breakdown, PartsAreTheBaselinesLibraryCallsAndFitInsideTheRun) {
  for (const char* id : {"8p", "9p", "12p", "18k"}) {
    SCOPED_TRACE(id);
    const Workload& w = *find_workload(id);
    const Breakdown b = measure_breakdown(w, Size::kSmoke, 1, "", 7, 3);
    EXPECT_EQ(b.runs, 3);
    EXPECT_GT(b.total_ms, 0);
    EXPECT_GE(b.outside_library_share(), 0);
    EXPECT_LE(b.outside_library_share(), 1);

    ProblemInstance instance(w, Size::kSmoke);
    instance.generate(7);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);  // as the breakdown ran it
    ops::start_recording_library_calls();
    instance.run_trusted(w.baseline, 1, KB_BF16);
    const std::vector<ops::LibraryCall> calls = ops::stop_recording_library_calls();
    omp_set_num_threads(saved);
    ASSERT_EQ(b.parts.size(), calls.size());
    double sum = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(b.parts[i].call, calls[i].key());
      EXPECT_EQ(b.parts[i].calls_per_run, calls[i].count);
      EXPECT_GT(b.parts[i].ms, 0);
      sum += b.parts[i].ms;
    }
    EXPECT_DOUBLE_EQ(b.library_ms, sum);
    // Each part is a median of times measured inside the runs, so it cannot exceed a run by more
    // than the spread between runs.
    EXPECT_LE(b.library_ms, 2 * b.total_ms);
    if (std::string_view(id) == "12p") {
      EXPECT_TRUE(b.parts.empty());  // RMSNorm calls no library
    }
  }
}

}  // namespace
}  // namespace kbench
