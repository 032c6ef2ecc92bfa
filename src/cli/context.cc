// Shared CLI plumbing.
#include "cli/context.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <string_view>

#include "core/environment.h"
#include "core/number_format.h"
#include "core/readable_file.h"
#include "harness/compiler.h"
#include "harness/evaluator.h"
#include "store/result_json.h"
#include "store/sinks.h"
#include "workloads/registry.h"

namespace kbench::cli {

const Workload& workload_or_usage_error(const std::string& id_or_name) {
  const Workload* w = find_workload(id_or_name);
  if (!w) throw UsageError("unknown workload '" + id_or_name + "' (see `kbench list`)");
  return *w;
}

std::vector<const Workload*> selected_workloads(const std::vector<std::string>& ids,
                                                const std::string& suite) {
  std::vector<const Workload*> chosen;
  if (!ids.empty()) {
    // A workload named twice ("-w 8p -w 8p_GEMM") is timed once: a run holds one result per
    // workload, which is what lets a resumed run tell what it still has to do.
    std::set<const Workload*> seen;
    for (const std::string& id : ids) {
      const Workload* w = &workload_or_usage_error(id);
      if (seen.insert(w).second) chosen.push_back(w);
    }
    return chosen;
  }
  if (suite != "all" && suite != "production" && suite != "kernelbench")
    throw UsageError("unknown suite '" + suite + "' (all, production or kernelbench)");
  for (const Workload* w : all_workloads()) {
    const bool in_suite =
        suite == "all" || (suite == "production") == (w->group() == Group::kProduction);
    if (in_suite) chosen.push_back(w);
  }
  return chosen;
}

Size size_or_usage_error(const std::string& text) {
  const auto size = parse_size(text);
  if (!size) throw UsageError("unknown size '" + text + "' (smoke, cpu or full)");
  return *size;
}

void candidate_file_or_usage_error(const std::string& path) {
  std::string problem = why_not_readable_file(path);
  std::error_code ec;
  if (const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
      problem.empty() && !ec && bytes > kMaxCandidateSourceBytes) {
    problem = "it is " + fixed(static_cast<double>(bytes) / (1 << 20), 1) +
              " MiB, and a candidate may be at most " +
              std::to_string(kMaxCandidateSourceBytes >> 20) + " MiB";
  }
  if (!problem.empty()) throw UsageError("cannot read candidate file '" + path + "': " + problem);
}

experts::ExpertKernel expert_or_usage_error(const Workload& workload) {
  const std::string dir = experts::default_experts_dir();
  if (std::optional<experts::ExpertKernel> expert = experts::find_expert(dir, workload))
    return std::move(*expert);
  std::string with_experts;
  for (const Workload* w : all_workloads()) {
    std::error_code ec;
    if (std::filesystem::exists(experts::expert_source_path(dir, *w), ec))
      with_experts += (with_experts.empty() ? "" : ", ") + std::string(w->id());
  }
  throw UsageError(
      std::string(workload.name) + " has no expert kernel in " + dir +
      (with_experts.empty() ? "" : " (these workloads have one: " + with_experts + ")"));
}

void base_url_or_usage_error(const std::string& option, const std::string& url) {
  if (url.empty()) return;
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (url.starts_with(scheme) && url.size() > scheme.size() && url[scheme.size()] != '/') return;
  }
  throw UsageError(option + " '" + url + "' is not an http:// or https:// URL with a host");
}

int threads_or_usage_error(int threads) {
  const auto available = static_cast<int>(worker_cpus(1 << 20).size());
  if (threads < 1 || threads > available)
    throw UsageError("--threads must be between 1 and " + std::to_string(available) +
                     " (the CPUs this process may use)");
  return threads;
}

double seconds_or_usage_error(const std::string& option, double seconds, double lowest,
                              double highest) {
  if (!(seconds >= lowest && seconds <= highest))
    throw UsageError(option + " must be from " + exact(lowest) + " to " + exact(highest) +
                     " seconds");
  return seconds;
}

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find kbench's own executable: " + ec.message());
  return self.string();
}

std::string worker_executable() {
  if (const char* path = std::getenv("KBENCH_WORKER"); path && *path) return path;
  return (std::filesystem::path(self_executable()).parent_path() / "kbench-worker").string();
}

namespace {

std::string db_path_or_usage_error(const std::string& db_option) {
  const std::string path = db_option.empty() ? default_db_path() : db_option;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UsageError("--db '" + path + "' is a directory; give the path of a database file");
  return path;
}

}  // namespace

EvalOptions timed_eval_options(const TimingOptions& options) {
  EvalOptions eval;
  eval.size = size_or_usage_error(options.size);
  eval.threads = threads_or_usage_error(options.threads);
  if (options.iters < 1 || options.warmup < 0)
    throw UsageError("--iters must be at least 1, --warmup at least 0");
  if (options.max_iters < options.iters) throw UsageError("--max-iters must be at least --iters");
  seconds_or_usage_error("--time-budget-s", options.time_budget_s, 0, kLongestBudgetS);
  eval.warmup = options.warmup;
  eval.iters = options.iters;
  eval.max_iters = options.max_iters;
  eval.time_budget_s = options.time_budget_s;
  eval.seed = options.seed;
  return eval;
}

EvalOptions resolved_eval_options(const Workload& workload, Size size, int threads,
                                  double time_budget_s) {
  EvalOptions eval;
  eval.workload = &workload;
  eval.size = size;
  eval.threads = threads;
  eval.time_budget_s = time_budget_s;
  eval.worker_exe = worker_executable();
  eval.cache_dir = kbench_cache_dir();
  resolve_baseline(eval);
  return eval;
}

ResultStore open_store(const std::string& db_option) {
  return ResultStore::open(db_path_or_usage_error(db_option));
}

ResultStore open_store_for_reading(const std::string& db_option) {
  const std::string path = db_path_or_usage_error(db_option);
  // A missing database reads as empty (nothing recorded yet), but a mistyped --db would then look
  // like a database without records: say which it is.
  std::error_code ec;
  if (path != ":memory:" && !std::filesystem::exists(path, ec))
    std::cerr << "kbench: no database at '" << path << "' yet: nothing is recorded there\n";
  return ResultStore::open_read_only(path);
}

MachineCache& machine_cache() {
  static MachineCache cache = MachineCache::from_environment();
  return cache;
}

void remember(const std::string& key, const std::string& value) {
  static bool warned = false;
  std::string why;
  if (!machine_cache().put(key, value, &why) && !warned) {
    warned = true;
    std::fprintf(stderr, "kbench: %s; this machine will be measured again next time\n",
                 why.c_str());
  }
}

void say_measuring(const std::string& what, bool again) {
  // Measured again, the cache may keep the new figures or the better of old and new (peaks, path
  // timings): the line says only where they live.
  std::fprintf(stderr, "kbench: measuring %s %s(kept in %s)\n", what.c_str(),
               again ? "again " : "once per machine ", machine_cache().dir().c_str());
}

CachedFact cached_or_measured(const std::string& key, const std::string& what,
                              const std::function<bool(const std::string&)>& usable,
                              const std::function<std::string()>& measure, bool force_measure) {
  const auto usable_cached = [&]() -> std::optional<CachedFact> {
    std::optional<CachedFact> cached = machine_cache().get(key);
    if (cached && usable(cached->value)) return cached;
    return std::nullopt;  // missing, damaged or of an older format: measured again
  };
  if (!force_measure)
    if (auto cached = usable_cached()) return std::move(*cached);
  const MachineCache::Hold hold = machine_cache().hold(key, [&what] {
    std::fprintf(stderr, "kbench: another kbench is measuring %s; waiting for its figures\n",
                 what.c_str());
  });
  // What the process that held it measured meanwhile.
  if (!force_measure)
    if (auto cached = usable_cached()) return std::move(*cached);
  say_measuring(what, force_measure);
  CachedFact fact{measure(), utc_now_iso8601()};
  remember(key, fact.value);
  return fact;
}

namespace {

// The peaks from the machine cache, or measured and cached where missing or `force_measure`. A
// measurement is first merged with `earlier` where given (each figure the higher of the two), so
// the cache is written once and never holds the lower figures.
MachinePeaks peaks_cached_or_measured(int threads, bool force_measure,
                                      const std::optional<PeakReport>& earlier) {
  const std::string key =
      "probe/" + current_environment().machine_id() + "/threads=" + std::to_string(threads);
  const std::string what = "this machine's peaks with " + std::to_string(threads) + " thread(s)";
  const CachedFact fact = cached_or_measured(
      key, what + ", 20-60 s",
      [](const std::string& value) {
        try {
          PeakReport::from_json(nlohmann::json::parse(value));
          return true;
        } catch (const std::exception&) {
          return false;
        }
      },
      [&] {
        ProgressLine progress("probe");
        progress.update("measuring " + what);
        const PeakReport measured = measure_peaks(threads);
        return (earlier ? higher_of(*earlier, measured) : measured).to_json().dump();
      },
      force_measure);
  return {PeakReport::from_json(nlohmann::json::parse(fact.value)), fact.measured_at};
}

}  // namespace

MachinePeaks machine_peaks(int threads, bool force_measure) {
  return peaks_cached_or_measured(threads, force_measure, std::nullopt);
}

MachinePeaks machine_peaks_measured_again(int threads) {
  return peaks_cached_or_measured(threads, /*force_measure=*/true, machine_peaks(threads).peaks);
}

void print_result(const EvalResult& result, bool json) {
  if (json) {
    std::cout << dump_json(to_json(result, {.include_samples = true, .include_source = false}), 2)
              << "\n";
  } else {
    write_verdict(std::cout, result);
  }
}

ProgressLine::ProgressLine(std::string prefix)
    : prefix_(std::move(prefix)), enabled_(isatty(STDERR_FILENO)) {}

ProgressLine::~ProgressLine() {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
}

void ProgressLine::update(const std::string& text) {
  if (enabled_) std::fprintf(stderr, "\r\033[K[%s] %s", prefix_.c_str(), text.c_str());
}

}  // namespace kbench::cli
