// The local pool: evaluation threads over a shared queue, one timing lease among them, and CPU
// pinning that keeps every check off the cores being timed.
#include "harness/executor.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace kbench {

CpuPlan plan_cpus(int threads) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(getpid(), sizeof allowed, &allowed);  // the process's, as worker_cpus reads it
  CpuPlan plan;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    // The same CPUs worker_cpus() gives a timed worker: the first `threads` allowed ones.
    (static_cast<int>(plan.timing.size()) < threads ? plan.timing : plan.checking).push_back(cpu);
  }
  return plan;
}

namespace {

// A directory of the executor's own: concurrent kbench processes (or runs with the same id in other
// databases) share the root, and a source file overwritten under a compile would be evaluated as
// another candidate.
ScratchDir batch_dir(const std::string& work_root) {
  try {
    return ScratchDir(work_root, "batch");
  } catch (const std::runtime_error& e) {
    throw HarnessError(e.what());
  }
}

}  // namespace

LocalPoolExecutor::LocalPoolExecutor(EvalOptions base, std::optional<PeakReport> peaks,
                                     const std::string& work_root, int jobs)
    : base_(std::move(base)),
      peaks_(std::move(peaks)),
      work_dir_(batch_dir(work_root)),
      cpus_(plan_cpus(base_.threads)) {
  const int most = cpus_.checking.empty() ? 1 : 1 + static_cast<int>(cpus_.checking.size());
  jobs_ = jobs > 0 ? std::min(jobs, most) : most;
}

LocalPoolExecutor::~LocalPoolExecutor() = default;

std::vector<EvalResult> LocalPoolExecutor::evaluate(const std::vector<std::string>& sources,
                                                    const OnDone& on_done) {
  std::vector<std::string> paths;
  for (const std::string& source : sources) {
    const std::string path =
        (work_dir_.path() / ("candidate-" + std::to_string(written_++) + ".cpp")).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << source;
    if (!out.flush()) throw HarnessError("cannot write candidate source " + path);
    paths.push_back(path);
  }

  std::vector<EvalResult> results(sources.size());
  std::mutex timing, report;
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  const bool concurrent = jobs_ > 1 && sources.size() > 1;
  const auto work = [&]() {
    while (true) {
      const std::size_t i = next.fetch_add(1);
      if (i >= paths.size()) return;
      EvalOptions options = base_;
      options.candidate_path = paths[i];
      options.progress = nullptr;
      if (concurrent) {
        options.check_cpus = cpus_.checking;
        options.acquire_timing = [&timing]() -> std::shared_ptr<void> {
          return std::make_shared<std::unique_lock<std::mutex>>(timing);
        };
      }
      try {
        EvalResult result = kbench::evaluate(options, peaks_);
        if (followup_) {
          const std::shared_ptr<void> lease =
              options.acquire_timing ? options.acquire_timing() : nullptr;
          followup_(options, result);
        }
        std::lock_guard lock(report);
        results[i] = std::move(result);
        if (on_done) on_done(i, results[i]);
      } catch (...) {
        std::lock_guard lock(report);
        if (!failure) failure = std::current_exception();
        next = paths.size();  // the others finish what they hold; nothing new starts
      }
    }
  };
  if (!concurrent) {
    work();
  } else {
    std::vector<std::thread> pool;
    const std::size_t threads = std::min<std::size_t>(jobs_, sources.size());
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace kbench
