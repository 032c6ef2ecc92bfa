// Resolving what a baseline runs and what it is measured against: the GEMM shape classes it meets
// (found by running it once under no plan, cached per kbench build), the fastest library path for
// each (measured once per machine, cached per machine and thread count), which make its GEMM plan;
// the library calls it makes under that plan (found by running it once more, cached per build and
// plan) and the best time of each on its fastest path, timed again where a baseline outruns them,
// which make its library ceiling. The fastest path of each convolution among those calls joins
// the GEMM plan in the library plan the baseline runs under.
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cli/context.h"
#include "core/environment.h"
#include "core/mkl_runtime.h"
#include "core/sha256.h"
#include "harness/evaluator.h"
#include "harness/problem_instance.h"
#include "ops/gemm.h"
#include "ops/library_calls.h"
#include "ops/library_threads.h"

namespace kbench::cli {
namespace {

using nlohmann::json;

// The GEMM shape classes the baseline as timed (bf16 outputs) and the f32 oracle meet or ask the
// plan about, under no plan, from one run of each in this process.
std::vector<ops::GemmShapeClass> gemm_classes_of(const Workload& workload, Size size, int threads) {
  ops::set_library_plan("");
  ProblemInstance instance(workload, size);
  instance.generate(1);
  instance.run_trusted(workload.baseline, threads, KB_BF16);
  instance.run_trusted(workload.baseline, threads, KB_F32);
  return ops::unplanned_gemm_classes();
}

// The library calls of the baseline as timed, under the GEMM plan now installed: a baseline may
// choose its calls by the plan (ops::gemm_reads_bf16). A convolution's key does not depend on its
// path.
std::vector<ops::LibraryCall> calls_under_plan(const Workload& workload, Size size, int threads) {
  ProblemInstance instance(workload, size);
  instance.generate(1);
  ops::start_recording_library_calls();
  instance.run_trusted(workload.baseline, threads, KB_BF16);
  return ops::stop_recording_library_calls();
}

json shape_to_json(const ops::GemmShapeClass& c) {
  return {{"m", c.m},
          {"n", c.n},
          {"k", c.k},
          {"b_transposed", c.b_transposed},
          {"f32_operands", c.f32_operands},
          {"threads", c.threads},
          {"epilogue", c.epilogue}};
}

ops::GemmShapeClass shape_from_json(const json& c) {
  return {c.at("m"),
          c.at("n"),
          c.at("k"),
          c.at("b_transposed"),
          c.at("f32_operands"),
          c.at("threads"),
          c.value("epilogue", "")};
}

json conv_to_json(const ops::ConvCall& c) {
  const ops::ConvGeometry& g = c.geometry;
  return {{"batch", g.batch},
          {"in_channels", g.in_channels},
          {"out_channels", g.out_channels},
          {"in_spatial", g.in_spatial},
          {"kernel", g.kernel},
          {"stride", g.stride},
          {"padding", g.padding},
          {"padding_right", g.padding_right},
          {"transposed", g.transposed},
          {"src_dtype", static_cast<int>(c.src_dtype)},
          {"weights_dtype", static_cast<int>(c.weights_dtype)},
          {"dst_dtype", static_cast<int>(c.dst_dtype)},
          {"channels_last", c.layout == ops::ConvLayout::kChannelsLast},
          {"threads", c.threads}};
}

ops::ConvCall conv_from_json(const json& j) {
  ops::ConvCall c;
  ops::ConvGeometry& g = c.geometry;
  g.batch = j.at("batch");
  g.in_channels = j.at("in_channels");
  g.out_channels = j.at("out_channels");
  g.in_spatial = j.at("in_spatial").get<std::vector<std::int64_t>>();
  g.kernel = j.at("kernel").get<std::vector<std::int64_t>>();
  g.stride = j.at("stride").get<std::vector<std::int64_t>>();
  g.padding = j.at("padding").get<std::vector<std::int64_t>>();
  g.padding_right = j.at("padding_right").get<std::vector<std::int64_t>>();
  g.transposed = j.at("transposed");
  c.src_dtype = static_cast<kb_dtype>(j.at("src_dtype").get<int>());
  c.weights_dtype = static_cast<kb_dtype>(j.at("weights_dtype").get<int>());
  c.dst_dtype = static_cast<kb_dtype>(j.at("dst_dtype").get<int>());
  c.layout =
      j.at("channels_last").get<bool>() ? ops::ConvLayout::kChannelsLast : ops::ConvLayout::kPlain;
  c.threads = j.at("threads");
  return c;
}

json calls_to_json(const std::vector<ops::LibraryCall>& calls) {
  json out = json::array();
  for (const ops::LibraryCall& call : calls) {
    const bool gemm = call.kind == ops::LibraryCall::Kind::kGemm;
    out.push_back(
        {{"count", call.count},
         {gemm ? "gemm" : "conv", gemm ? shape_to_json(call.gemm) : conv_to_json(call.conv)}});
  }
  return out;
}

std::vector<ops::LibraryCall> calls_from_json(const json& j) {
  std::vector<ops::LibraryCall> calls;
  for (const json& c : j) {
    ops::LibraryCall call;
    call.count = c.at("count");
    if (c.contains("gemm")) {
      call.gemm = shape_from_json(c.at("gemm"));
    } else {
      call.kind = ops::LibraryCall::Kind::kConv;
      call.conv = conv_from_json(c.at("conv"));
    }
    calls.push_back(std::move(call));
  }
  return calls;
}

json classes_to_json(const std::vector<ops::GemmShapeClass>& classes) {
  json out = json::array();
  for (const ops::GemmShapeClass& c : classes) out.push_back(shape_to_json(c));
  return out;
}

std::vector<ops::GemmShapeClass> classes_from_json(const json& j) {
  std::vector<ops::GemmShapeClass> classes;
  for (const json& c : j) classes.push_back(shape_from_json(c));
  return classes;
}

// What `find` returns, kept in the machine cache under `key` where `cacheable`, and read from there
// when an earlier run kept it (a damaged entry is found again and overwritten).
template <class T>
T found_once(const std::string& key, bool cacheable, const std::string& what,
             const std::function<T()>& find, json (*to_json)(const T&),
             T (*from_json)(const json&)) {
  if (cacheable) {
    if (const auto cached = machine_cache().get(key)) {
      try {
        return from_json(json::parse(cached->value));
      } catch (const std::exception&) {
      }
    }
  }
  ProgressLine progress("plan");
  progress.update(what);
  T found = find();
  if (cacheable) remember(key, to_json(found).dump());
  return found;
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

// A cached path-timings entry, parsed; none where `value` is not one.
std::optional<json> path_timings_in(const std::string& value) {
  try {
    json entry = json::parse(value);
    if (entry.at("path").is_string() && entry.at("best_ms").is_object()) return entry;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

bool is_path_timings(const std::string& value) {
  return path_timings_in(value).has_value();
}

// A measurement cached per machine under `key`: {"path": fastest, "best_ms": {path: ms, ...}}.
// Measured by `measure` (path -> best ms) when missing or unreadable. With `retime`, measured again
// whatever is cached, each path keeping the faster of its two times: both were this machine's, and
// the slower is the one something disturbed.
json cached_path_timings(
    const std::string& key, int threads, const std::string& what,
    const std::function<std::vector<std::pair<std::string, double>>()>& measure,
    bool retime = false) {
  const CachedFact fact = cached_or_measured(
      key, "every library path at " + what, is_path_timings,
      [&] {
        ProgressLine progress("plan");
        progress.update("timing every library path at " + what);
        std::vector<std::pair<std::string, double>> timings;
        {
          const PinnedLikeWorker pinned(threads);
          timings = measure();
        }
        const std::optional<CachedFact> earlier = machine_cache().get(key);
        const std::optional<json> earlier_entry =
            earlier ? path_timings_in(earlier->value) : std::nullopt;
        const json earlier_ms = earlier_entry ? earlier_entry->at("best_ms") : json::object();
        json entry = {{"path", ""}, {"best_ms", json::object()}};
        double best = 0;
        for (auto [path, ms] : timings) {
          if (const auto it = earlier_ms.find(path); it != earlier_ms.end() && it->is_number())
            ms = std::min(ms, it->get<double>());
          entry["best_ms"][path] = ms;
          if (entry["path"] == "" || ms < best) {
            entry["path"] = path;
            best = ms;
          }
        }
        return entry.dump();
      },
      retime);
  return json::parse(fact.value);
}

json gemm_timings(const ops::GemmShapeClass& shape, bool retime = false) {
  return cached_path_timings(
      // v3: keyed by the libraries loaded, so a machine that gains MKL measures its paths again;
      // v4: since the epilogues kbench runs after OpenBLAS and MKL take XLA's tanh (GELU, tanh,
      // mish), which made those paths faster than their v3 timings.
      "gemm-path-v4/" + current_environment().machine_id() + "/" + ops::gemm_libraries() + "/" +
          shape.key(),
      shape.threads, shape.key(),
      [&] {
        std::vector<ops::PathTiming> timings;
        const ops::GemmPath fastest = ops::measure_fastest_path(shape, &timings);
        std::vector<std::pair<std::string, double>> out;
        for (const ops::PathTiming& t : timings)
          out.emplace_back(ops::gemm_path_name(t.path), t.best_ms);
        // The fastest first, so that a tie keeps measure_fastest_path's choice.
        std::stable_partition(out.begin(), out.end(), [&](const auto& entry) {
          return entry.first == ops::gemm_path_name(fastest);
        });
        return out;
      },
      retime);
}

json conv_timings(const ops::ConvCall& call, bool retime = false) {
  return cached_path_timings(
      // v2: measured since reference kernels stopped counting as a path (ops/onednn_reference.h);
      // v3: since a result that needs a reorder is staged in bf16 for bf16 users on native-bf16
      // CPUs and transposed by kbench, and each path is warmed before its back-to-back calls.
      "conv-path-v3/" + current_environment().machine_id() + "/" + call.key(), call.threads,
      call.key(), [&] { return ops::measure_conv_paths(call); }, retime);
}

// The best time of each of `calls` on its fastest path, summed: the baseline's library ceiling
// (none where no library path ran any of them); `retime` times every call again. Where
// `conv_plan` is given, each convolution's plan entry ("key=path", the path its part stands on)
// is added to it.
std::optional<LibraryCeiling> library_ceiling_of(const std::vector<ops::LibraryCall>& calls,
                                                 bool retime,
                                                 std::vector<std::string>* conv_plan = nullptr) {
  LibraryCeiling ceiling;
  for (const ops::LibraryCall& call : calls) {
    const bool gemm = call.kind == ops::LibraryCall::Kind::kGemm;
    const json timings = gemm ? gemm_timings(call.gemm, retime) : conv_timings(call.conv, retime);
    const std::string path = timings.at("path");
    if (path.empty()) continue;  // no library path ran it: no ceiling part to stand on
    if (!gemm && conv_plan) conv_plan->push_back(call.conv.key() + "=" + path);
    LibraryCeilingPart part{call.key(), call.count, call.flops(), path,
                            timings.at("best_ms").at(path).get<double>()};
    ceiling.ms += part.count * part.best_ms;
    ceiling.parts.push_back(std::move(part));
  }
  if (ceiling.parts.empty()) return std::nullopt;
  return ceiling;
}

}  // namespace

void resolve_baseline(EvalOptions& eval) {
  const Workload& workload = *eval.workload;
  ops::set_library_threads(eval.threads);
  const std::string baseline_key = std::string(current_environment().kbench_commit) + "/" +
                                   std::string(workload.name) + "/" + size_name(eval.size) +
                                   "/threads=" + std::to_string(eval.threads);
  // A build whose commit is unknown (a dirty tree reports "-dirty") may differ from what an entry
  // was made by: such entries are found again every time rather than trusted.
  const bool cacheable = current_environment().kbench_commit.find("dirty") == std::string::npos &&
                         current_environment().kbench_commit != "unknown";
  const std::vector<ops::GemmShapeClass> classes = found_once<std::vector<ops::GemmShapeClass>>(
      "gemm-classes-v1/" + baseline_key, cacheable,
      "finding the GEMMs of " + std::string(workload.name) + "'s baseline",
      [&] { return gemm_classes_of(workload, eval.size, eval.threads); }, classes_to_json,
      classes_from_json);

  static bool said_no_mkl = false;
  if (!classes.empty() && !mkl::runtime() && !said_no_mkl) {
    said_no_mkl = true;
    std::fprintf(stderr, "kbench: %s; GEMMs run on oneDNN and OpenBLAS\n", mkl::status().c_str());
  }
  std::string plan;
  for (const ops::GemmShapeClass& shape : classes) {
    const std::string path = gemm_timings(shape).at("path");
    if (!plan.empty()) plan += ';';
    plan += shape.key() + "=" + path;
  }
  ops::set_library_plan(plan);

  // Per plan as well as per build: a plan is this machine's.
  const std::vector<ops::LibraryCall> calls = found_once<std::vector<ops::LibraryCall>>(
      "library-calls-v2/" + baseline_key + "/plan=" + sha256_hex(plan).substr(0, 16), cacheable,
      "finding the library calls of " + std::string(workload.name) + "'s baseline",
      [&] { return calls_under_plan(workload, eval.size, eval.threads); }, calls_to_json,
      calls_from_json);
  // Each convolution on its fastest path, as each GEMM class: native bf16 is not always the faster
  // (on the Emerald Rapids VM, without AMX, f32 was 1.5-2.3x faster for every conv of the suite).
  std::vector<std::string> conv_plan;
  eval.library_ceiling = library_ceiling_of(calls, /*retime=*/false, &conv_plan);
  for (const std::string& entry : conv_plan) {
    if (!plan.empty()) plan += ';';
    plan += entry;
  }
  ops::set_library_plan(plan);
  eval.library_plan = plan;
  // Timed again at most once per resolution: every evaluation that shares these options (an
  // agent's samples, a tuner's trials) then stands on the same fresh figures.
  struct Retimed {
    std::mutex mutex;
    std::optional<std::optional<LibraryCeiling>> ceiling;
  };
  eval.retime_library_ceiling = [calls, retimed = std::make_shared<Retimed>()] {
    const std::lock_guard lock(retimed->mutex);
    if (!retimed->ceiling) retimed->ceiling = library_ceiling_of(calls, /*retime=*/true);
    return *retimed->ceiling;
  };
  // Likewise the peaks, once per resolution.
  struct Remeasured {
    std::mutex mutex;
    std::optional<PeakReport> peaks;
  };
  eval.measure_peaks_again = [threads = eval.threads, again = std::make_shared<Remeasured>()] {
    const std::lock_guard lock(again->mutex);
    if (!again->peaks) again->peaks = machine_peaks_measured_again(threads).peaks;
    return again->peaks;
  };
}

}  // namespace kbench::cli
