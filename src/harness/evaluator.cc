// Gate by gate: compile, check on fresh seeds against the fp32 oracle, then time candidate and
// baseline interleaved on fresh inputs, checking every timed output.
#include "harness/evaluator.h"

#include <sched.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <random>

#include "core/stats.h"
#include "core/timer.h"
#include "harness/checker.h"
#include "harness/compiler.h"
#include "harness/problem_instance.h"
#include "harness/worker_process.h"

namespace kbench {
namespace {

// Seeds of the timed calls are offset from the correctness seeds so no input set repeats.
constexpr std::uint64_t kTimingSeedOffset = 1'000'000;
// Bootstrap resamples for the speedup CI: enough that the 2.5/97.5 percentiles move < 0.1%.
constexpr int kBootstrapResamples = 2000;
// CPU-time slack: scheduler accounting is tick-based (10 ms), so small totals need headroom.
constexpr double kCpuBudgetFactor = 1.2;
constexpr double kCpuBudgetSlackS = 0.05;

std::uint64_t fresh_seed() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

// A kernel under test in its worker, with the output arena it writes.
struct Side {
  SharedTensors* outputs;  // the instance's output arena, shared by all sides
  std::unique_ptr<WorkerProcess> worker;
  // f32 copies of the last call's outputs, read while the worker is frozen; reused across calls.
  std::vector<std::vector<float>> last_outputs;
};

// One call with poisoned outputs; on success, copies the outputs when `read_outputs`.
CallOutcome call_side(Side& side, double timeout_s, bool read_outputs = true) {
  side.outputs->poison();
  const CallOutcome outcome = side.worker->call(timeout_s);
  if (outcome.status == CallStatus::kOk && read_outputs) {
    side.last_outputs.resize(side.outputs->views().size());
    for (std::size_t i = 0; i < side.last_outputs.size(); ++i)
      to_f32(side.outputs->views()[i], side.last_outputs[i]);
  }
  return outcome;
}

Status status_of(const CallOutcome& outcome) {
  switch (outcome.status) {
    case CallStatus::kOk:
      return Status::kCorrect;
    case CallStatus::kTimeout:
      return Status::kTimeout;
    default:
      return Status::kRuntimeError;
  }
}

Side start_side(const EvalOptions& options, ProblemInstance& instance, const std::string& so_path,
                long long mem_limit_mb, CallOutcome& failure) {
  Side side{&instance.shared_outputs(), nullptr, {}};
  WorkerSpec spec;
  spec.worker_exe = options.worker_exe;
  spec.workload = options.workload;
  spec.size = options.size;
  spec.threads = options.threads;
  spec.cpus = worker_cpus(options.threads);
  spec.so_path = so_path;
  spec.mem_limit_mb = mem_limit_mb;
  spec.inputs_fd = instance.shared_inputs_fd();
  spec.outputs_fd = side.outputs->fd();
  spec.startup_timeout_s = std::max(10.0, options.call_timeout_s);
  side.worker = WorkerProcess::start(spec, failure);
  return side;
}

TimingSummary summary_of(std::vector<double> samples_ms) {
  TimingSummary s;
  s.iters = static_cast<int>(samples_ms.size());
  s.median_ms = median(samples_ms);
  s.p25_ms = quantile(samples_ms, 0.25);
  s.p75_ms = quantile(samples_ms, 0.75);
  s.min_ms = *std::min_element(samples_ms.begin(), samples_ms.end());
  s.mean_ms = mean(samples_ms);
  s.samples_ms = std::move(samples_ms);
  return s;
}

Utilization utilization_of(const Problem& problem, double median_ms,
                           const std::optional<PeakReport>& peaks) {
  Utilization u;
  const double seconds = median_ms * 1e-3;
  u.gflops = problem.flops / seconds * 1e-9;
  u.gbps = problem.min_bytes / seconds * 1e-9;
  u.peak_flops_kind = "fp32_fma";
  if (peaks) {
    u.peak_gflops = peaks->fp32_fma_gflops;
    u.peak_gbps = peaks->mem_bw_gbps;
    if (u.peak_gflops > 0) u.pct_peak_flops = 100 * u.gflops / u.peak_gflops;
    if (u.peak_gbps > 0) u.pct_peak_bw = 100 * u.gbps / u.peak_gbps;
  }
  return u;
}

void fail(EvalResult& r, Status status, std::string error, std::string diagnostics = "") {
  r.status = status;
  r.error = std::move(error);
  if (!diagnostics.empty()) r.diagnostics += diagnostics;
}

void report_progress(const EvalOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

// Gate 2: the candidate alone on `options.trials` fresh input sets against the in-process fp32
// oracle.
bool check_correctness(const EvalOptions& options, ProblemInstance& instance, Side& candidate,
                       std::uint64_t base_seed, EvalResult& r) {
  const Workload& w = *options.workload;
  for (int trial = 0; trial < options.trials; ++trial) {
    report_progress(options, "checking correctness " + std::to_string(trial + 1) + "/" +
                                 std::to_string(options.trials));
    const std::uint64_t seed = base_seed + static_cast<std::uint64_t>(trial);
    instance.generate(seed);
    std::vector<HostTensor> oracle_tensors = instance.run_trusted(w.baseline, options.threads);
    const auto oracle = to_f32(oracle_tensors);
    const CallOutcome call = call_side(candidate, options.call_timeout_s);
    r.correctness.trials = trial + 1;
    r.correctness.seeds.push_back(seed);
    if (call.status != CallStatus::kOk) {
      fail(r, status_of(call), call.message, candidate.worker->log_tail());
      return false;
    }
    if (!instance.inputs_intact()) {
      fail(r, Status::kRuntimeError, "kb_run modified its read-only inputs");
      return false;
    }
    const CheckResult c =
        check_outputs(instance.problem(), candidate.last_outputs, oracle, w.tolerance);
    merge_check(r.correctness, c);
    if (!c.passed) {
      fail(r, Status::kIncorrect,
           "wrong result for seed " + std::to_string(seed) + ": " + c.detail);
      return false;
    }
  }
  r.correctness.passed = true;
  return true;
}

// A record of `kind` with what the options fix before anything runs.
EvalResult new_result(const EvalOptions& options, const char* kind) {
  EvalResult r;
  r.kind = kind;
  r.workload = std::string(options.workload->name);
  r.size = size_name(options.size);
  r.threads = options.threads;
  r.warmup = options.warmup;
  r.created_at = now_iso8601();
  return r;
}

}  // namespace

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::vector<int> worker_cpus(int threads) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof allowed, &allowed);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<int>(cpus.size()) < threads; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  return cpus;
}

EvalResult evaluate(const EvalOptions& options, const std::optional<PeakReport>& peaks) {
  const double start = now_seconds();
  const Workload& w = *options.workload;
  EvalResult r = new_result(options, "eval");
  auto finish = [&]() -> EvalResult {
    r.wall_s = now_seconds() - start;
    return r;
  };

  // Gate 1: it compiles (and loads, and exports kb_run).
  std::string so_path;
  if (options.baseline_as_candidate) {
    r.candidate_path = "builtin:baseline";
    r.candidate_hash = "builtin:baseline";
  } else {
    report_progress(options, "compiling");
    r.candidate_path = options.candidate_path;
    const CompileOutcome compiled = compile_candidate(options.candidate_path, {options.cache_dir});
    r.candidate_source = compiled.source;
    r.candidate_hash = compiled.hash;
    r.diagnostics = compiled.diagnostics;
    if (!compiled.ok) {
      fail(r, Status::kCompileError, "compilation failed");
      return finish();
    }
    so_path = compiled.so_path;
  }

  ProblemInstance instance(w, options.size);
  CallOutcome failure;
  Side candidate = start_side(options, instance, so_path, options.mem_limit_mb, failure);
  if (!candidate.worker) {
    const bool build_problem =
        failure.message.starts_with("load: ") || failure.message.starts_with("entry: ");
    fail(r, build_problem ? Status::kCompileError : status_of(failure), failure.message);
    return finish();
  }

  // Gate 2: correct on fresh inputs.
  const std::uint64_t base_seed = options.seed.value_or(fresh_seed());
  if (!check_correctness(options, instance, candidate, base_seed, r)) return finish();

  // Gate 3: faster than the baseline, both timed from outside their processes, interleaved.
  Side baseline = start_side(options, instance, "", 0, failure);
  if (!baseline.worker) throw HarnessError("baseline worker failed to start: " + failure.message);
  const double cpu_before = candidate.worker->cpu_seconds();
  double candidate_wall_s = 0;
  std::vector<double> candidate_ms, baseline_ms;
  const int total = options.warmup + options.iters;
  for (int i = 0; i < total; ++i) {
    report_progress(options, "timing " + std::to_string(i + 1) + "/" + std::to_string(total));
    instance.generate(base_seed + kTimingSeedOffset + static_cast<std::uint64_t>(i));
    CallOutcome cand, base;
    // Alternate who runs first, so whatever the first call after new inputs pays hits both equally.
    const bool candidate_first = i % 2 == 0;
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == candidate_first) {
        cand = call_side(candidate, options.call_timeout_s);
        if (cand.status != CallStatus::kOk) {
          fail(r, status_of(cand), cand.message + " (timed call " + std::to_string(i) + ")",
               candidate.worker->log_tail());
          return finish();
        }
      } else {
        base = call_side(baseline, options.call_timeout_s * 10);
        if (base.status != CallStatus::kOk)
          throw HarnessError("baseline failed during timing: " + base.message);
      }
    }
    // Checked once both have run, so the check's memory traffic precedes neither side's call.
    if (!instance.inputs_intact()) {
      fail(r, Status::kRuntimeError, "kb_run modified its read-only inputs");
      return finish();
    }
    const CheckResult same = check_outputs(instance.problem(), candidate.last_outputs,
                                           baseline.last_outputs, w.tolerance);
    if (!same.passed) {
      fail(r, Status::kIncorrect,
           "timed call " + std::to_string(i) +
               " disagrees with the baseline on the same fresh inputs: " + same.detail);
      return finish();
    }
    candidate_wall_s += cand.seconds;
    if (i >= options.warmup) {
      candidate_ms.push_back(cand.seconds * 1e3);
      baseline_ms.push_back(base.seconds * 1e3);
    }
  }
  const double cpu_used = candidate.worker->cpu_seconds() - cpu_before;
  const double cpu_budget =
      kCpuBudgetFactor * options.threads * candidate_wall_s + kCpuBudgetSlackS;
  if (cpu_used > cpu_budget) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "used %.3f s of CPU during %.3f s of calls: more than its %d thread(s) allow",
                  cpu_used, candidate_wall_s, options.threads);
    fail(r, Status::kRuntimeError, buf);
    return finish();
  }

  r.status = Status::kCorrect;
  r.candidate = summary_of(candidate_ms);
  r.baseline = summary_of(baseline_ms);
  r.speedup = r.baseline->median_ms / r.candidate->median_ms;
  r.speedup_ci95 =
      bootstrap_ratio_ci(baseline_ms, candidate_ms, 0.95, kBootstrapResamples, base_seed);
  r.utilization = utilization_of(instance.problem(), r.candidate->median_ms, peaks);
  return finish();
}

EvalResult run_baseline(const EvalOptions& options, const std::optional<PeakReport>& peaks) {
  const double start = now_seconds();
  const Workload& w = *options.workload;
  EvalResult r = new_result(options, "run");
  r.candidate_path = "builtin:baseline";
  r.candidate_hash = "builtin:baseline";
  const std::uint64_t base_seed = options.seed.value_or(fresh_seed());

  // The baseline must agree with the independent reference (smoke size: the reference is slow),
  // both as the fp32 oracle and as the bf16 kernel that gets timed.
  report_progress(options, "checking baseline against reference");
  ProblemInstance smoke(w, Size::kSmoke);
  smoke.generate(base_seed);
  std::vector<HostTensor> truth_tensors = smoke.run_trusted(w.reference, 1);
  const auto truth = to_f32(truth_tensors);
  r.correctness.seeds.push_back(base_seed);
  for (kb_dtype dtype : {KB_F32, KB_BF16}) {
    std::vector<HostTensor> got = smoke.run_trusted(w.baseline, options.threads, dtype);
    merge_check(r.correctness, check_outputs(smoke.problem(), to_f32(got), truth, w.tolerance));
    ++r.correctness.trials;
  }
  r.correctness.passed = r.correctness.detail.empty();
  if (!r.correctness.passed) {
    fail(r, Status::kIncorrect,
         "baseline disagrees with the reference at smoke size: " + r.correctness.detail);
    r.wall_s = now_seconds() - start;
    return r;
  }

  ProblemInstance instance(w, options.size);
  CallOutcome failure;
  Side baseline = start_side(options, instance, "", 0, failure);
  if (!baseline.worker) throw HarnessError("baseline worker failed to start: " + failure.message);
  std::vector<double> samples_ms;
  const int total = options.warmup + options.iters;
  for (int i = 0; i < total; ++i) {
    report_progress(options, "timing " + std::to_string(i + 1) + "/" + std::to_string(total));
    instance.generate(base_seed + kTimingSeedOffset + static_cast<std::uint64_t>(i));
    const CallOutcome call =
        call_side(baseline, options.call_timeout_s * 10, /*read_outputs=*/false);
    if (call.status != CallStatus::kOk)
      throw HarnessError("baseline failed during timing: " + call.message);
    if (i >= options.warmup) samples_ms.push_back(call.seconds * 1e3);
  }
  r.status = Status::kCorrect;
  r.baseline = summary_of(samples_ms);
  r.utilization = utilization_of(instance.problem(), r.baseline->median_ms, peaks);
  r.wall_s = now_seconds() - start;
  return r;
}

}  // namespace kbench
