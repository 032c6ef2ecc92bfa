// The library ceiling: the recorder sees every library call a baseline makes, as many times as it
// makes it, and a baseline (those calls plus the passes between them) never runs faster than its
// calls alone on their fastest paths, the rule behind kbench run's "above 105% of its library
// ceiling" warning.
#include "ops/library_calls.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include <gtest/gtest.h>

#include "core/timer.h"
#include "harness/problem_instance.h"
#include "harness/roofline.h"
#include "workloads/registry.h"

namespace kbench {
namespace {

std::vector<ops::LibraryCall> calls_of(const Workload& w, ProblemInstance& instance) {
  ops::start_recording_library_calls();
  instance.run_trusted(w.baseline, 1, KB_BF16);
  return ops::stop_recording_library_calls();
}

TEST(LibraryCalls, RecordsEachCallWithItsCountOnlyWhileRecording) {
  omp_set_num_threads(1);
  HostTensor a({"a", KB_BF16, {4, 8}}), b({"b", KB_BF16, {8, 3}}), c({"c", KB_F32, {4, 3}});
  const ops::Matrix ma = ops::matrix_of(a.view()), mb = ops::matrix_of(b.view());
  kb_tensor c_view = c.view();
  const ops::MutableMatrix mc = ops::mutable_matrix_of(c_view);
  ops::gemm(ma, mb, false, mc);  // before recording: not kept
  ops::start_recording_library_calls();
  for (int i = 0; i < 3; ++i) ops::gemm(ma, mb, false, mc);
  const std::vector<ops::LibraryCall> calls = ops::stop_recording_library_calls();
  ops::gemm(ma, mb, false, mc);  // after: not kept
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].kind, ops::LibraryCall::Kind::kGemm);
  EXPECT_EQ(calls[0].count, 3);
  EXPECT_EQ(calls[0].key(), "gemm 4x3x8:nn:bf16:t1");
  EXPECT_DOUBLE_EQ(calls[0].flops(), 2.0 * 4 * 3 * 8);
}

TEST(LibraryCalls, EveryMatmulBaselineIsSeenAndTheSameTwice) {
  omp_set_num_threads(1);
  int with_calls = 0;
  for (const Workload* w : all_workloads()) {
    ProblemInstance instance(*w, Size::kSmoke);
    instance.generate(7);
    const std::vector<ops::LibraryCall> first = calls_of(*w, instance);
    const std::vector<ops::LibraryCall> second = calls_of(*w, instance);
    ASSERT_EQ(first.size(), second.size()) << w->name;
    for (std::size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ(first[i].key(), second[i].key()) << w->name;
      EXPECT_EQ(first[i].count, second[i].count) << w->name;
      EXPECT_GT(first[i].flops(), 0) << w->name << " " << first[i].key();
    }
    if (!first.empty()) ++with_calls;
    // A bf16 matmul workload whose baseline calls no library has no ceiling to be held to; all but
    // the hand-written scans do.
  }
  EXPECT_GE(with_calls, 45);
}

// The ceiling of `w` at smoke size, and the baseline's best single-thread time, both timed the way
// the ceiling times a library call: warm, back to back, in batches (best_back_to_back_ms), the
// baseline writing into outputs allocated once, as a timed worker's are.
struct Measured {
  double ceiling_ms = 0, baseline_ms = 0;
};

Measured measure(const Workload& w) {
  omp_set_num_threads(1);
  ProblemInstance instance(w, Size::kSmoke);
  instance.generate(11);
  ops::set_gemm_plan("");
  const std::vector<ops::LibraryCall> calls = calls_of(w, instance);
  Measured m;
  std::string plan;
  for (const ops::LibraryCall& call : calls) {
    double best = 0;
    if (call.kind == ops::LibraryCall::Kind::kGemm) {
      std::vector<ops::PathTiming> timings;
      const ops::GemmPath fastest = ops::measure_fastest_path(call.gemm, &timings);
      for (const ops::PathTiming& t : timings)
        best = best == 0 ? t.best_ms : std::min(best, t.best_ms);
      if (!plan.empty()) plan += ';';
      plan += call.gemm.key();
      plan += '=';
      plan += ops::gemm_path_name(fastest);
    } else {
      for (const auto& [path, ms] : ops::measure_conv_paths(call.conv))
        best = best == 0 ? ms : std::min(best, ms);
    }
    m.ceiling_ms += call.count * best;
  }
  ops::set_gemm_plan(plan);
  std::vector<HostTensor> inputs, outputs;
  for (const HostTensor& input : instance.inputs()) {
    inputs.emplace_back(input.spec());
    std::memcpy(inputs.back().data(), input.data(), input.spec().bytes());
  }
  for (const TensorSpec& spec : instance.output_specs(KB_BF16)) outputs.emplace_back(spec);
  std::vector<kb_tensor> in = views_of(inputs), out = views_of(outputs);
  const std::vector<kb_param> params = abi_params(instance.problem());
  const kb_config config{1, static_cast<int32_t>(params.size()), params.data()};
  m.baseline_ms = best_back_to_back_ms(
      [&] {
        w.baseline(&config, in.data(), static_cast<int32_t>(in.size()), out.data(),
                   static_cast<int32_t>(out.size()));
      },
      /*single_thread=*/true, /*batches=*/8);
  ops::set_gemm_plan("");
  return m;
}

TEST(LibraryCeiling, NoBaselineBeatsItsOwnLibraryCalls) {
  // GEMM-only, GEMM with reductions, many small GEMMs, grouped GEMMs, a convolution and a
  // transposed one. Load from other processes only adds time, to either side; a baseline that
  // really beats its ceiling does so on every try, so a workload fails only when three tries do.
  constexpr int kTries = 3;
  for (const char* id : {"8p", "21k", "1p", "11p", "18k", "28k"}) {
    const Workload& w = *find_workload(id);
    Measured m;
    double pct = 0;
    for (int attempt = 0; attempt < kTries; ++attempt) {
      m = measure(w);
      ASSERT_GT(m.ceiling_ms, 0) << id;
      pct = 100 * m.ceiling_ms / m.baseline_ms;
      if (pct <= kMaxBaselinePctLibrary) break;
    }
    EXPECT_LE(pct, kMaxBaselinePctLibrary)
        << id << ": baseline " << m.baseline_ms << " ms, its library calls alone " << m.ceiling_ms
        << " ms";
  }
}

}  // namespace
}  // namespace kbench
