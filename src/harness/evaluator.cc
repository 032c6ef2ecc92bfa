// Gate by gate: compile, check on fresh seeds against the fp32 oracle, then time candidate and
// baseline interleaved on fresh inputs, checking every timed output, until the speedup is known to
// 2% or the time budget is spent; calls disturbed by the rest of the machine are left out
// (harness/noise.h).
#include "harness/evaluator.h"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <map>
#include <random>

#include "core/environment.h"
#include "core/stats.h"
#include "core/timer.h"
#include "harness/call_preamble.h"
#include "harness/checker.h"
#include "harness/compiler.h"
#include "harness/noise.h"
#include "harness/problem_instance.h"
#include "harness/roofline.h"
#include "harness/schedstat.h"
#include "harness/thread_cpus.h"
#include "harness/worker_process.h"

namespace kbench {
namespace {

// Seeds of the timed calls are offset from the correctness seeds so no input set repeats.
constexpr std::uint64_t kTimingSeedOffset = 1'000'000;

std::uint64_t fresh_seed() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

// A kernel under test in its worker, with the output arena only it and kbench map: no side can
// read what another wrote (the baseline's answers), or write into it.
struct Side {
  SharedTensors outputs;
  std::unique_ptr<WorkerProcess> worker;
};

// One untimed call with poisoned outputs, so anything the kernel leaves unwritten fails the check.
CallOutcome call_side(Side& side, double timeout_s) {
  side.outputs.poison();
  return side.worker->call(timeout_s);
}

Status status_of(const CallOutcome& outcome) {
  switch (outcome.status) {
    case CallStatus::kOk:
      return Status::kCorrect;
    case CallStatus::kTimeout:
      return Status::kTimeout;
    case CallStatus::kViolation:
      return Status::kRejected;
    default:
      return Status::kRuntimeError;
  }
}

Side new_side(const Problem& problem) {
  return {SharedTensors::create(problem.outputs, "kbench-outputs"), nullptr};
}

// Starts the side's worker in `seat`, loading `so_path` (empty: the baseline); false with `failure`
// set when it did not start.
bool start_worker(Side& side, const SeatConditions& seat, const std::string& so_path,
                  CallOutcome& failure) {
  side.worker = WorkerProcess::start({seat, so_path, side.outputs.fd()}, failure);
  return side.worker != nullptr;
}

// A timed call of `side`, after the preamble that makes it start from the same state whichever side
// ran before it (harness/call_preamble.h).
CallOutcome timed_call(Side& side, const ProblemInstance& instance, const Side* other,
                       double timeout_s) {
  settled_call_preamble(side.outputs, instance.shared_inputs(), other ? &other->outputs : nullptr);
  return side.worker->call(timeout_s);
}

// A timed call of the baseline, with ten times a candidate call's timeout. The baseline is the
// yardstick, so its failure is the harness's error, never a verdict on the candidate.
CallOutcome timed_baseline_call(Side& baseline, const ProblemInstance& instance,
                                const Side* candidate, double call_timeout_s) {
  CallOutcome outcome = timed_call(baseline, instance, candidate, call_timeout_s * 10);
  if (outcome.status != CallStatus::kOk)
    throw HarnessError("baseline failed during timing: " + outcome.message);
  return outcome;
}

// The timed calls of one side, with what kbench measured around each.
struct Series {
  std::vector<double> ms, wait_ms, offcpu_ms, cpu_ms, adjusted_ms;
  std::vector<std::uint8_t> disturbed;
  bool accounted = true;  // every call had scheduler counters

  void add(const CallOutcome& call, int threads) {
    const CallTiming t = call_timing(call.seconds, call.sched, threads);
    accounted = accounted && t.accounted;
    ms.push_back(t.wall_ms);
    wait_ms.push_back(t.wait_ms);
    offcpu_ms.push_back(t.offcpu_ms);
    cpu_ms.push_back(t.cpu_ms);
    adjusted_ms.push_back(t.adjusted_ms);
    disturbed.push_back(static_cast<std::uint8_t>(t.disturbed));
  }
};

// The side's summary: statistics of the adjusted times the estimator uses, with every call's data.
TimingSummary summary_of(Series series) {
  TimingSummary s;
  s.iters = static_cast<int>(series.ms.size());
  s.used = s.iters;
  const TimingStats stats = summarize(series.adjusted_ms);
  s.median_ms = stats.median;
  s.p25_ms = stats.p25;
  s.p75_ms = stats.p75;
  s.min_ms = stats.min;
  s.mean_ms = stats.mean;
  s.wall_median_ms = median(series.ms);
  s.samples_ms = std::move(series.ms);
  if (series.accounted) {
    s.wait_ms = std::move(series.wait_ms);
    s.offcpu_ms = std::move(series.offcpu_ms);
    s.cpu_ms = std::move(series.cpu_ms);
    s.adjusted_ms = std::move(series.adjusted_ms);
    s.disturbed = std::move(series.disturbed);
  }
  return s;
}

void fail(EvalResult& r, Status status, std::string error, std::string diagnostics = "") {
  r.status = status;
  r.error = std::move(error);
  if (!diagnostics.empty()) r.diagnostics += diagnostics;
}

void report_progress(const EvalOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

// The library ceiling for a result whose baseline took `baseline_median_ms`, timed again where
// the baseline outran the cached one. Called while this evaluation holds the timing slot, so the
// calls are timed under the baseline's conditions.
std::optional<LibraryCeiling> library_ceiling_beside(const EvalOptions& options,
                                                     double baseline_median_ms) {
  if (!options.retime_library_ceiling) return options.library_ceiling;
  return settled_library_ceiling(options.library_ceiling, baseline_median_ms, [&options] {
    report_progress(options, "the baseline outran its cached library ceiling: timing it again");
    return options.retime_library_ceiling();
  });
}

// A timed result's library ceiling, its utilization at `median_ms` (the candidate's, or the
// baseline's in `run`) and the baseline's place against the physical floor, from r.baseline. The
// peaks are measured again where the baseline beat the floor the passed ones put under it, so a
// probe cached from a slow moment heals here; only a floor the baseline still beats sets
// r.suspicious. Called while this evaluation holds the timing slot, so whatever is measured again
// is measured under the baseline's conditions.
void settle_roofline(const EvalOptions& options, const Problem& problem, MathClass math,
                     double median_ms, const std::optional<PeakReport>& peaks, EvalResult& r) {
  const double baseline_ms = r.baseline->median_ms;
  r.library_ceiling = library_ceiling_beside(options, baseline_ms);
  r.utilization = utilization_of(problem, math, median_ms, peaks, r.library_ceiling);
  r.suspicious = baseline_below_physical_floor(baseline_ms, r.utilization);
  if (r.suspicious.empty() || !options.measure_peaks_again) return;
  report_progress(options, "the baseline ran below its physical floor: measuring the peaks again");
  if (const std::optional<PeakReport> fresh = options.measure_peaks_again()) {
    r.utilization = utilization_of(problem, math, median_ms, fresh, r.library_ceiling);
    r.suspicious = baseline_below_physical_floor(baseline_ms, r.utilization, true);
  }
}

std::string warmup_progress(int index, int warmup) {
  return "warmup " + std::to_string(index + 1) + "/" + std::to_string(warmup);
}

// `index` counts from 0 like the warmup's; the line counts from 1. `timing_start` dates the time
// budget, whose remainder the line shows.
std::string timing_progress(int index, const SpeedupEstimate& e, const StopRule& rule,
                            double timing_start) {
  const int iters = index + 1;
  const double left_s = rule.time_budget_s - (now_seconds() - timing_start);
  char buf[128];
  if (e.pairs > 0) {
    std::snprintf(buf, sizeof buf, "timing %d (CI +-%.1f%%, %.0f s left)", iters,
                  100 * e.half_width, std::max(0.0, left_s));
  } else {
    std::snprintf(buf, sizeof buf, "timing %d", iters);
  }
  return buf;
}

StopRule stop_rule_of(const EvalOptions& options) {
  StopRule rule;
  rule.min_iters = options.iters;
  rule.max_iters = std::max(options.iters, options.max_iters);
  rule.time_budget_s = options.time_budget_s;
  return rule;
}

// After a failed check, or once timing is over: a reply the candidate forged before its kb_run
// returned leaves the genuine one to arrive late, in place of the ping's. True (and `r` failed as
// rejected, or as a runtime error if the worker died) when the channel does not answer cleanly.
bool channel_broken(const EvalOptions& options, Side& side, EvalResult& r) {
  const CallOutcome ping = side.worker->verify_channel(options.call_timeout_s);
  if (ping.status == CallStatus::kOk) return false;
  fail(r, status_of(ping), ping.message, side.worker->log_tail());
  return true;
}

// Gate 2: the candidate alone on correctness_trials(options) fresh input sets against the
// in-process fp32 oracle.
bool check_correctness(const EvalOptions& options, ProblemInstance& instance, Side& candidate,
                       std::uint64_t base_seed, EvalResult& r) {
  const Workload& w = *options.workload;
  const int trials = correctness_trials(options);
  for (int trial = 0; trial < trials; ++trial) {
    report_progress(options, "checking correctness " + std::to_string(trial + 1) + "/" +
                                 std::to_string(trials));
    const std::uint64_t seed = base_seed + static_cast<std::uint64_t>(trial);
    instance.generate(seed);
    std::vector<HostTensor> oracle_tensors = instance.oracle(options.threads);
    std::vector<HostTensor> magnitude_tensors = instance.term_magnitudes(options.threads);
    const std::vector<kb_tensor> oracle = views_of(oracle_tensors);
    const std::vector<kb_tensor> magnitudes = views_of(magnitude_tensors);
    const CallOutcome call = call_side(candidate, options.call_timeout_s);
    r.correctness.seeds.push_back(seed);
    if (call.status != CallStatus::kOk) {
      fail(r, status_of(call), call.message, candidate.worker->log_tail());
      return false;
    }
    if (!instance.inputs_intact()) {
      fail(r, Status::kRejected, "sandbox: kb_run modified its read-only inputs");
      return false;
    }
    const CheckResult c = check_outputs(instance.problem(), candidate.outputs.views(), oracle,
                                        w.tolerance, magnitudes);
    // Only a trial whose outputs were compared counts: a crash or a timeout measured no error.
    r.correctness.trials = trial + 1;
    merge_check(r.correctness, c);
    if (!c.passed) {
      if (channel_broken(options, candidate, r)) return false;
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
  r.baseline_library_plan = options.library_plan;
  r.created_at = utc_now_iso8601();
  return r;
}

void record_bounds(const StopRule& rule, const std::string& stop, NoiseReport& noise) {
  noise.stop_reason = stop;
  noise.min_iters = rule.min_iters;
  noise.max_iters = rule.max_iters;
  noise.time_budget_s = rule.time_budget_s;
}

}  // namespace

namespace {

// "<whose> median M ms is below the physical floor of F ms (...): <meaning>", or empty where the
// median is not below it or the roofs were not measured.
std::string floor_breach(const char* whose, double median_ms,
                         const std::optional<Utilization>& util, const char* meaning) {
  if (!util || !(util->roofline_ms > 0) || !(median_ms < util->roofline_ms)) return "";
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%smedian %.4g ms is below the physical floor of %.4g ms (%s-bound at %.4g "
                "GFLOP/s, %.4g GB/s): %s",
                whose, median_ms, util->roofline_ms, util->bound.c_str(), util->peak_gflops,
                util->peak_gbps, meaning);
  return buf;
}

}  // namespace

std::string below_physical_floor(double median_ms, const std::optional<Utilization>& util) {
  return floor_breach("", median_ms, util, "an algebraic shortcut, or a measurement to distrust");
}

std::string baseline_below_physical_floor(double baseline_median_ms,
                                          const std::optional<Utilization>& util,
                                          bool peaks_measured_again) {
  return floor_breach("the baseline's ", baseline_median_ms, util,
                      peaks_measured_again
                          ? "the floor counts work a kernel may skip (a kbench bug): the peaks "
                            "were measured again beside it"
                          : "the floor counts work a kernel may skip (a kbench bug), or the peaks "
                            "were measured in a slow moment (`kbench probe --force` measures "
                            "them again)");
}

SeatConditions seat_conditions(const EvalOptions& options, int inputs_fd, std::vector<int> cpus) {
  SeatConditions seat;
  seat.worker_exe = options.worker_exe;
  seat.workload = options.workload;
  seat.size = options.size;
  seat.threads = options.threads;
  seat.cpus = std::move(cpus);
  // Never below the workload's own tensors three times over (inputs, outputs, a kernel's copies of
  // them) plus a GiB for libraries and scratch: some exceed 4 GiB at the full size, and the limit
  // must not decide whether a faithful baseline runs at all.
  const auto tensor_mb =
      static_cast<long long>(tensor_bytes(options.workload->problem(options.size)) / (1 << 20));
  seat.mem_limit_mb =
      options.mem_limit_mb > 0 ? std::max(options.mem_limit_mb, 1024 + 3 * tensor_mb) : 0;
  seat.inputs_fd = inputs_fd;
  seat.startup_timeout_s = std::max(10.0, options.call_timeout_s);
  // A backstop behind the per-call deadlines (the worker is frozen between calls): every call at
  // its deadline, on every thread, twice over. A side makes at most two calls per pair: its timed
  // call and a bridge.
  const double calls = correctness_trials(options) +
                       2.0 * (options.warmup + std::max(options.iters, options.max_iters));
  seat.cpu_limit_s =
      2 * options.threads * (options.time_budget_s + calls * options.call_timeout_s) + 10;
  seat.library_plan = options.library_plan;
  return seat;
}

std::vector<int> worker_cpus(int threads) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  // The process's CPUs, read from its main thread: an evaluating thread may be pinned to the
  // checking CPUs (EvalOptions::check_cpus) and must not see only those.
  sched_getaffinity(getpid(), sizeof allowed, &allowed);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && static_cast<int>(cpus.size()) < threads; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  return cpus;
}

int correctness_trials(const EvalOptions& options) {
  if (options.baseline_as_candidate) return options.trials;
  return std::max(options.trials, kMinCheckedDraws - std::max(options.iters, 0));
}

EvalResult evaluate(const EvalOptions& options, const std::optional<PeakReport>& peaks) {
  const double start = now_seconds();
  const Workload& w = *options.workload;
  EvalResult r = new_result(options, "eval");
  // Compiler processes and the oracle inherit this thread's CPUs; restored whatever happens.
  ThreadCpus this_thread;
  if (!options.check_cpus.empty()) this_thread.pin(options.check_cpus);
  std::shared_ptr<void> timing_lease;
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
    if (!compiled.cached) r.sandbox = SandboxReport{compiled.build_layers, compiled.build_missing};
    if (!compiled.ok) {
      fail(r, Status::kCompileError, "compilation failed");
      return finish();
    }
    so_path = compiled.so_path;
  }

  ProblemInstance instance(w, options.size);
  CallOutcome failure;
  // Gate 2 checks the candidate in a worker of its own, on the checking CPUs where there are any.
  Side candidate = new_side(instance.problem()), baseline = new_side(instance.problem());
  SharedTensors::allocate_alike(candidate.outputs, baseline.outputs);
  const auto seat_on = [&](std::vector<int> cpus) {
    return seat_conditions(options, instance.shared_inputs_fd(), std::move(cpus));
  };
  if (!start_worker(
          candidate,
          seat_on(options.check_cpus.empty() ? worker_cpus(options.threads) : options.check_cpus),
          so_path, failure)) {
    const bool build_problem =
        failure.message.starts_with("load: ") || failure.message.starts_with("entry: ");
    fail(r, build_problem ? Status::kCompileError : status_of(failure), failure.message);
    return finish();
  }
  SandboxReport confinement = r.sandbox.value_or(SandboxReport{});  // the build's, if it ran now
  const SandboxReport& worker = candidate.worker->sandbox();
  confinement.layers.insert(confinement.layers.end(), worker.layers.begin(), worker.layers.end());
  confinement.missing.insert(confinement.missing.end(), worker.missing.begin(),
                             worker.missing.end());
  r.sandbox = std::move(confinement);

  // Gate 2: correct on fresh inputs.
  const std::uint64_t base_seed = options.seed.value_or(fresh_seed());
  if (!check_correctness(options, instance, candidate, base_seed, r)) return finish();

  // Gate 3: faster than the baseline, both timed from outside their processes, interleaved.
  if (options.acquire_timing) {
    report_progress(options, "waiting for the timing cores");
    timing_lease = options.acquire_timing();
  }
  // Both sides are timed in workers started now, alike, in one seat (in an A/A check the baseline
  // takes both). The worker that ran the trials is retired: its first calls came before any of
  // the baseline's (below).
  candidate.worker.reset();
  const std::vector<int> timing_cpus = worker_cpus(options.threads);
  const SeatConditions seat = seat_on(timing_cpus);
  if (!start_worker(candidate, seat, so_path, failure)) {
    fail(r, status_of(failure), failure.message + " (started again for timing)");
    return finish();
  }
  if (!start_worker(baseline, seat, "", failure))
    throw HarnessError("baseline worker failed to start: " + failure.message);
  // The preamble warms the inputs and outputs in the caches of the worker's first CPU.
  this_thread.pin({timing_cpus.front()});
  if (const std::string differs =
          observation_difference(candidate.worker->observe(), baseline.worker->observe());
      !differs.empty())
    throw HarnessError("the two seats do not run alike (" + differs + ")");
  const AwakeTime awake_before = candidate.worker->awake();
  // An untimed, unchecked call of one side on the current inputs, before the next pair's are
  // drawn: a worker's first call, or a bridge, which kbench makes only so that the next timed call
  // follows the other side's call (on inputs the side has already seen).
  const auto bridge = [&](bool candidate_side, const char* when) -> bool {
    Side& side = candidate_side ? candidate : baseline;
    const CallOutcome call = call_side(side, options.call_timeout_s * (candidate_side ? 1 : 10));
    if (call.status == CallStatus::kOk) return true;
    if (!candidate_side)
      throw HarnessError("baseline failed " + std::string(when) + ": " + call.message);
    fail(r, status_of(call), call.message + " (" + when + ")", candidate.worker->log_tail());
    return false;
  };
  // A worker's first call is where its kernel first touches its own memory (scratch, library
  // buffers), and the worker whose first call came first ran slower for its life, by about 0.4% in
  // 17p's A/A checks at the cpu size (docs/evaluation.md, "The first call"). No order makes the
  // two alike, so which side calls first is drawn for each evaluation, and the offset falls on
  // either side alike.
  const bool baseline_calls_first = (fresh_seed() & 1) != 0;
  for (bool candidate_side : {!baseline_calls_first, baseline_calls_first})
    if (!bridge(candidate_side, "first call for timing")) return finish();
  // Which side made the last call; a pair never starts with it.
  bool candidate_ran_last = baseline_calls_first;
  // Every timed call follows a call of the other side. The order alternates, so each pair would
  // start with the side that ended the last one, whose own state (code, buffers, TLB entries) its
  // call just before left warm (measured: A/A order splits of 2-5% at the cpu size, up to 19% at
  // smoke); a bridge call of the other side goes in between, before pair i's inputs are drawn.
  const auto before_pair = [&](int i) -> bool {
    const bool candidate_first = candidate_goes_first(static_cast<std::size_t>(i));
    if (candidate_ran_last != candidate_first) return true;
    candidate_ran_last = !candidate_first;
    return bridge(!candidate_first, "between pairs");
  };
  // Runs pair i on the current inputs, in the order candidate_goes_first(i) gives; `kind` names
  // the call in a failure ("warm-up call", "timed call").
  const auto run_pair = [&](int i, const char* kind, CallOutcome& cand, CallOutcome& base) -> bool {
    const bool candidate_first = candidate_goes_first(static_cast<std::size_t>(i));
    candidate_ran_last = !candidate_first;
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == candidate_first) {
        cand = timed_call(candidate, instance, &baseline, options.call_timeout_s);
        if (cand.status != CallStatus::kOk) {
          fail(r, status_of(cand), cand.message + " (" + kind + " " + std::to_string(i) + ")",
               candidate.worker->log_tail());
          return false;
        }
      } else {
        base = timed_baseline_call(baseline, instance, &candidate, options.call_timeout_s);
      }
    }
    return true;
  };

  StopRule rule = stop_rule_of(options);
  rule.min_seconds_near_one = kMinSecondsNearOne;
  const double timing_start = now_seconds();
  const std::map<int, CpuTicks> stat_before = read_proc_stat();
  // Warmup: untimed pairs on the last correctness inputs (page faults of the arenas, thread pools,
  // caches); their outputs are neither timed nor compared.
  for (int i = 0; i < options.warmup; ++i) {
    report_progress(options, warmup_progress(i, options.warmup));
    CallOutcome cand, base;
    if (!before_pair(i) || !run_pair(i, "warm-up call", cand, base)) return finish();
  }

  Series cand_series, base_series;
  SpeedupEstimate estimate;
  std::string stop;
  for (int i = 0; stop.empty(); ++i) {
    report_progress(options, timing_progress(i, estimate, rule, timing_start));
    if (!before_pair(i)) return finish();
    instance.generate_shared(base_seed + kTimingSeedOffset + static_cast<std::uint64_t>(i));
    write_back(instance.shared_inputs());
    CallOutcome cand, base;
    if (!run_pair(i, "timed call", cand, base)) return finish();
    if (!instance.inputs_intact()) {
      fail(r, Status::kRejected, "sandbox: kb_run modified its read-only inputs");
      return finish();
    }
    const CheckResult same = check_timed_outputs(
        instance.problem(), candidate.outputs.views(), baseline.outputs.views(), w.tolerance, [&] {
          return OracleOfInputs{instance.oracle(options.threads),
                                instance.term_magnitudes(options.threads)};
        });
    if (!same.passed) {
      if (channel_broken(options, candidate, r)) return finish();
      fail(r, Status::kIncorrect,
           "timed call " + std::to_string(i) +
               " is wrong for its fresh inputs (against their oracle): " + same.detail);
      return finish();
    }
    cand_series.add(cand, options.threads);
    base_series.add(base, options.threads);
    const int iters = i + 1;
    estimate = estimate_speedup(base_series.adjusted_ms, cand_series.adjusted_ms);
    stop = stop_reason(rule, iters, now_seconds() - timing_start, estimate);
  }
  const double timed_s = now_seconds() - timing_start;
  const double steal = steal_percent(stat_before, read_proc_stat(), worker_cpus(options.threads));
  if (channel_broken(options, candidate, r)) return finish();

  // CPU time and wall time over the same awake windows, the final ping's included.
  const AwakeTime awake{candidate.worker->awake().wall_s - awake_before.wall_s,
                        candidate.worker->awake().cpu_s - awake_before.cpu_s};
  if (exceeds_thread_budget(awake, options.threads)) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "used %.3f s of CPU in %.3f s awake: more than its %d thread(s) allow",
                  awake.cpu_s, awake.wall_s, options.threads);
    fail(r, Status::kRejected, std::string("sandbox: ") + buf);
    return finish();
  }

  NoiseReport noise =
      noise_report({cand_series.ms, cand_series.disturbed}, {base_series.ms, base_series.disturbed},
                   estimate, steal, cand_series.accounted && base_series.accounted,
                   order_effect(base_series.adjusted_ms, cand_series.adjusted_ms));
  record_bounds(rule, stop, noise);
  r.status = Status::kCorrect;
  r.candidate = summary_of(std::move(cand_series));
  r.baseline = summary_of(std::move(base_series));
  const SpeedupEstimate reported = reported_estimate(estimate, noise.order_effect);
  r.speedup = reported.speedup;
  r.speedup_ci95 = reported.ci95;
  r.noise = std::move(noise);
  r.speedup_verdict = significance(r);
  mark_too_short_near_one(r, timed_s);
  settle_roofline(options, instance.problem(), w.math, r.candidate->median_ms, peaks, r);
  // Against a floor the baseline itself beat, the candidate's place says nothing about it.
  if (r.suspicious.empty())
    r.suspicious = below_physical_floor(r.candidate->median_ms, r.utilization);
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
  // The seat `kbench eval` times the baseline in, so the two commands' baseline times agree.
  Side baseline = new_side(instance.problem());
  if (!start_worker(
          baseline,
          seat_conditions(options, instance.shared_inputs_fd(), worker_cpus(options.threads)), "",
          failure))
    throw HarnessError("baseline worker failed to start: " + failure.message);
  ThreadCpus this_thread;
  this_thread.pin({worker_cpus(options.threads).front()});
  const auto call = [&]() {
    return timed_baseline_call(baseline, instance, nullptr, options.call_timeout_s);
  };
  const StopRule rule = stop_rule_of(options);
  const double timing_start = now_seconds();
  const std::map<int, CpuTicks> stat_before = read_proc_stat();
  instance.generate_shared(base_seed + kTimingSeedOffset - 1);
  for (int i = 0; i < options.warmup; ++i) {
    report_progress(options, warmup_progress(i, options.warmup));
    call();
  }
  Series series;
  SpeedupEstimate estimate;
  std::string stop;
  for (int i = 0; stop.empty(); ++i) {
    report_progress(options, timing_progress(i, estimate, rule, timing_start));
    instance.generate_shared(base_seed + kTimingSeedOffset + static_cast<std::uint64_t>(i));
    write_back(instance.shared_inputs());
    series.add(call(), options.threads);
    const int iters = i + 1;
    estimate = estimate_median(series.adjusted_ms);
    stop = stop_reason(rule, iters, now_seconds() - timing_start, estimate);
  }
  const double steal = steal_percent(stat_before, read_proc_stat(), worker_cpus(options.threads));
  NoiseReport noise =
      noise_report({}, {series.ms, series.disturbed}, estimate, steal, series.accounted);
  record_bounds(rule, stop, noise);
  r.status = Status::kCorrect;
  r.baseline = summary_of(std::move(series));
  r.noise = std::move(noise);
  settle_roofline(options, instance.problem(), w.math, r.baseline->median_ms, peaks, r);
  if (r.suspicious.empty() && r.utilization->pct_library > kMaxBaselinePctLibrary) {
    char buf[200];
    std::snprintf(
        buf, sizeof buf, "baseline at %.0f%% of its own library ceiling%s",
        r.utilization->pct_library,
        r.library_ceiling->retimed
            ? ", timed again beside it: the ceiling misses a call or times one unlike the baseline"
            : ": the ceiling missed a library call or was measured under other "
              "conditions");
    r.suspicious = buf;
  }
  r.wall_s = now_seconds() - start;
  return r;
}

}  // namespace kbench
