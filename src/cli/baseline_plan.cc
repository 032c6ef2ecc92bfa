// Resolving a baseline's GEMM plan: which shape classes the baseline meets (found by running it
// once, cached per kbench build), and the fastest library path for each (measured once per
// machine, cached per machine and thread count).
#include <cblas.h>
#include <omp.h>
#include <sched.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/context.h"
#include "core/environment.h"
#include "harness/evaluator.h"
#include "harness/problem_instance.h"
#include "workloads/gemm.h"

namespace kbench::cli {
namespace {

// Runs the baseline once in this process, as the timed kernel (bf16 outputs) and as the oracle
// (f32), and returns the shape classes its GEMMs asked for.
std::vector<ops::GemmShapeClass> discover_classes(const Workload& workload, Size size,
                                                  int threads) {
  ops::set_gemm_plan("");
  ProblemInstance instance(workload, size);
  instance.generate(1);
  for (const kb_dtype dtype : {KB_BF16, KB_F32})
    instance.run_trusted(workload.baseline, threads, dtype);
  return ops::unplanned_gemm_classes();
}

// Pins the calling thread to the CPUs a worker with `threads` threads gets, for as long as it
// lives, so the measurement sees the cores the baseline will run on.
class PinnedLikeWorker {
 public:
  explicit PinnedLikeWorker(int threads) {
    sched_getaffinity(0, sizeof saved_, &saved_);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int cpu : worker_cpus(threads)) CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  ~PinnedLikeWorker() { sched_setaffinity(0, sizeof saved_, &saved_); }
  PinnedLikeWorker(const PinnedLikeWorker&) = delete;
  PinnedLikeWorker& operator=(const PinnedLikeWorker&) = delete;

 private:
  cpu_set_t saved_;
};

}  // namespace

std::string baseline_gemm_plan(ResultStore& store, const Workload& workload, Size size,
                               int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  const std::string classes_key =
      "gemm-classes/" + std::string(current_environment().kbench_commit) + "/" +
      std::string(workload.name) + "/" + size_name(size) + "/threads=" + std::to_string(threads);
  std::vector<ops::GemmShapeClass> classes;
  bool from_cache = false;
  if (const auto cached = store.cache_get(classes_key)) {
    try {
      for (const auto& c : nlohmann::json::parse(*cached))
        classes.push_back({c.at("m"), c.at("n"), c.at("k"), c.at("b_transposed"),
                           c.at("f32_operands"), c.at("threads")});
      from_cache = true;
    } catch (const std::exception&) {
      classes.clear();  // a damaged entry is discovered again and overwritten
    }
  }
  // A build whose commit is unknown (a dirty tree reports "-dirty") may differ from what the entry
  // was made by: such entries are rediscovered every time rather than trusted.
  const bool cacheable = current_environment().kbench_commit.find("dirty") == std::string::npos &&
                         current_environment().kbench_commit != "unknown";
  if (!from_cache || !cacheable) {
    ProgressLine progress("plan");
    progress.update("finding the GEMM shapes of " + std::string(workload.name) + "'s baseline");
    classes = discover_classes(workload, size, threads);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : classes)
      list.push_back({{"m", c.m},
                      {"n", c.n},
                      {"k", c.k},
                      {"b_transposed", c.b_transposed},
                      {"f32_operands", c.f32_operands},
                      {"threads", c.threads}});
    if (cacheable) store.cache_put(classes_key, list.dump());
  }

  std::string plan;
  for (const ops::GemmShapeClass& shape : classes) {
    const std::string path_key =
        "gemm-path-v2/" + current_environment().machine_id() + "/" + shape.key();
    std::optional<ops::GemmPath> path;
    if (const auto cached = store.cache_get(path_key)) {
      try {
        path = ops::parse_gemm_path(nlohmann::json::parse(*cached).at("path").get<std::string>());
      } catch (const std::exception&) {
        // measured again below
      }
    }
    if (!path) {
      ProgressLine progress("plan");
      progress.update("timing every GEMM library path at " + shape.key());
      std::vector<ops::PathTiming> timings;
      {
        const PinnedLikeWorker pinned(threads);
        path = ops::measure_fastest_path(shape, &timings);
      }
      nlohmann::json entry = {{"path", ops::gemm_path_name(*path)},
                              {"best_ms", nlohmann::json::object()}};
      for (const ops::PathTiming& t : timings)
        entry["best_ms"][ops::gemm_path_name(t.path)] = t.best_ms;
      store.cache_put(path_key, entry.dump());
    }
    if (!plan.empty()) plan += ';';
    plan += shape.key() + "=" + ops::gemm_path_name(*path);
  }
  ops::set_gemm_plan(plan);
  return plan;
}

}  // namespace kbench::cli
