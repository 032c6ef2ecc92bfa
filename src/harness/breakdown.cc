#include "harness/breakdown.h"

#include <algorithm>
#include <stdexcept>

#include "core/stats.h"
#include "core/timer.h"
#include "harness/evaluator.h"
#include "harness/problem_instance.h"
#include "harness/thread_cpus.h"
#include "ops/gemm.h"
#include "ops/library_calls.h"
#include "ops/library_threads.h"

namespace kbench {

double Breakdown::outside_library_share() const {
  if (total_ms <= 0) return 0;
  return std::clamp(1.0 - library_ms / total_ms, 0.0, 1.0);
}

Breakdown measure_breakdown(const Workload& workload, Size size, int threads,
                            const std::string& library_plan, std::uint64_t seed, int runs) {
  if (runs < 1) throw std::invalid_argument("a breakdown needs at least one timed run");
  ThreadCpus this_thread;
  this_thread.pin(worker_cpus(threads));
  const ops::LibraryThreads library_threads(threads);
  if (!library_plan.empty()) ops::set_library_plan(library_plan);

  ProblemInstance instance(workload, size);
  instance.generate(seed);
  std::vector<HostTensor> outputs;
  for (const TensorSpec& spec : instance.output_specs(KB_BF16)) outputs.emplace_back(spec);
  const auto shared = instance.shared_inputs();
  std::vector<kb_tensor> in(shared.begin(), shared.end());
  std::vector<kb_tensor> out = views_of(outputs);
  const std::vector<kb_param> params = abi_params(instance.problem());
  const kb_config config{threads, static_cast<int32_t>(params.size()), params.data()};
  auto run_once = [&] {
    if (workload.baseline(&config, in.data(), static_cast<int32_t>(in.size()), out.data(),
                          static_cast<int32_t>(out.size())) != 0)
      throw HarnessError(std::string(workload.name) + ": the baseline returned an error");
  };

  constexpr int kWarmupRuns = 2;
  for (int i = 0; i < kWarmupRuns; ++i) run_once();
  std::vector<double> totals_ms;
  std::vector<std::vector<ops::LibraryCall>> calls_of_run;
  for (int i = 0; i < runs; ++i) {
    ops::start_recording_library_calls();
    const double start = now_seconds();
    run_once();
    totals_ms.push_back((now_seconds() - start) * 1e3);
    calls_of_run.push_back(ops::stop_recording_library_calls());
  }

  Breakdown b;
  b.runs = runs;
  b.total_ms = median(totals_ms);
  // The calls are the same in every run (a baseline's calls follow from the shapes alone); each
  // part's time is its median over the runs.
  for (const ops::LibraryCall& call : calls_of_run.front()) {
    BreakdownPart part{call.key(), call.count, 0, call.in_parallel_region, call.spread_over};
    std::vector<double> ms;
    for (const auto& calls : calls_of_run) {
      const auto same = std::find_if(calls.begin(), calls.end(), [&](const ops::LibraryCall& c) {
        return c.key() == part.call;
      });
      ms.push_back(same == calls.end() ? 0.0 : same->seconds * 1e3);
    }
    part.ms = median(ms) / std::max(1, part.spread_over);
    b.library_ms += part.ms;
    b.parts.push_back(std::move(part));
  }
  return b;
}

}  // namespace kbench
