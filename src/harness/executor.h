// Where an agent's candidates get evaluated. Methods hand a round's sources to an Executor and
// never call the evaluator themselves, so a cluster executor can replace the local pool without
// touching them.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/scratch_dir.h"
#include "harness/evaluator.h"

namespace kbench {

class Executor {
 public:
  virtual ~Executor() = default;
  // Called once per source as its evaluation ends, in completion order, never concurrently.
  using OnDone = std::function<void(std::size_t index, const EvalResult& result)>;
  // Evaluates each of `sources` (candidate C++ text) under the standard gates and returns the
  // results in the order of `sources`. Throws HarnessError when kbench itself fails.
  virtual std::vector<EvalResult> evaluate(const std::vector<std::string>& sources,
                                           const OnDone& on_done) = 0;
};

// The CPUs of this process split for concurrent evaluation: gate 3 (timing) holds `timing` alone;
// compilation and correctness checks use `checking`. Empty `checking`: evaluations run one at a
// time (a machine with no CPU to spare beside the timed ones).
struct CpuPlan {
  std::vector<int> timing;
  std::vector<int> checking;
};
CpuPlan plan_cpus(int threads);

// Evaluates on this machine: up to `jobs` evaluations at once, compiling and checking in parallel
// on the checking CPUs while at most one holds the timing CPUs.
class LocalPoolExecutor : public Executor {
 public:
  // `base` carries everything but the candidate path (workload, size, threads, worker, cache,
  // gemm plan, ...). `jobs` 0: one per checking CPU plus the timing one. Sources are written to a
  // private directory created under `work_root` (a ScratchDir, batch-*) and removed with the
  // executor; those of killed kbench processes are removed when the next executor starts.
  LocalPoolExecutor(EvalOptions base, std::optional<PeakReport> peaks, const std::string& work_root,
                    int jobs = 0);
  ~LocalPoolExecutor() override;
  LocalPoolExecutor(const LocalPoolExecutor&) = delete;
  LocalPoolExecutor& operator=(const LocalPoolExecutor&) = delete;
  std::vector<EvalResult> evaluate(const std::vector<std::string>& sources,
                                   const OnDone& on_done) override;
  int jobs() const { return jobs_; }

  // Runs after each evaluation, before its result is reported, and may add to the result (the
  // agents' loop analysis). It holds the timing CPUs as gate 3 does: work that runs the candidate
  // again must not overlap another evaluation's timing.
  using Followup = std::function<void(const EvalOptions& options, EvalResult& result)>;
  void set_followup(Followup followup) { followup_ = std::move(followup); }

 private:
  EvalOptions base_;
  std::optional<PeakReport> peaks_;
  ScratchDir work_dir_;
  CpuPlan cpus_;
  int jobs_ = 1;
  int written_ = 0;  // sources written so far: their file names
  Followup followup_;
};

}  // namespace kbench
