// Converts EvalResult to and from JSON.
#include "store/result_json.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

namespace kbench {
namespace {

using nlohmann::json;

// JSON has no NaN or infinity; nlohmann would silently print null, which readers would take for
// "not measured". A string keeps the value and still parses everywhere.
json number(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

json optional_number(const std::optional<double>& value) {
  return value ? number(*value) : json(nullptr);
}

json timing_to_json(const TimingSummary& timing, bool include_samples) {
  json out = {
      {"median_ms", number(timing.median_ms)}, {"p25_ms", number(timing.p25_ms)},
      {"p75_ms", number(timing.p75_ms)},       {"min_ms", number(timing.min_ms)},
      {"mean_ms", number(timing.mean_ms)},     {"iters", timing.iters},
  };
  out["used"] = timing.used;
  out["wall_median_ms"] = number(timing.wall_median_ms);
  if (include_samples) {
    const auto numbers = [](const std::vector<double>& values) {
      json array = json::array();
      for (double v : values) array.push_back(number(v));
      return array;
    };
    out["samples_ms"] = numbers(timing.samples_ms);
    if (!timing.wait_ms.empty()) out["wait_ms"] = numbers(timing.wait_ms);
    if (!timing.offcpu_ms.empty()) out["offcpu_ms"] = numbers(timing.offcpu_ms);
    if (!timing.cpu_ms.empty()) out["cpu_ms"] = numbers(timing.cpu_ms);
    if (!timing.adjusted_ms.empty()) out["adjusted_ms"] = numbers(timing.adjusted_ms);
    if (!timing.disturbed.empty()) out["disturbed"] = timing.disturbed;
  }
  return out;
}

json order_effect_to_json(const OrderEffect& o) {
  return {
      {"candidate_first", number(o.candidate_first)},
      {"candidate_first_ci95",
       {number(o.candidate_first_ci95.first), number(o.candidate_first_ci95.second)}},
      {"candidate_first_pairs", o.candidate_first_pairs},
      {"baseline_first", number(o.baseline_first)},
      {"baseline_first_ci95",
       {number(o.baseline_first_ci95.first), number(o.baseline_first_ci95.second)}},
      {"baseline_first_pairs", o.baseline_first_pairs},
      {"split", number(o.split)},
      {"carryover", number(o.carryover)},
      {"carryover_ci95", {number(o.carryover_ci95.first), number(o.carryover_ci95.second)}},
      {"couples", o.couples},
  };
}

json noise_to_json(const NoiseReport& n) {
  json out = {
      {"cv_candidate", number(n.cv_candidate)},
      {"cv_baseline", number(n.cv_baseline)},
      {"steal_pct", number(n.steal_pct)},
      {"calls", n.calls},
      {"disturbed_calls", n.disturbed_calls},
      {"candidate_disturbed", n.candidate_disturbed},
      {"baseline_disturbed", n.baseline_disturbed},
      {"unadjustable_calls", n.unadjustable_calls},
      {"clean_pairs", n.clean_pairs},
      {"accounted", n.accounted},
      {"estimator", n.estimator},
      {"ci_half_width_pct", number(n.ci_half_width_pct)},
      {"stable", n.stable},
      {"unstable_reason", n.unstable_reason},
      {"stop_reason", n.stop_reason},
      {"min_iters", n.min_iters},
      {"max_iters", n.max_iters},
      {"time_budget_s", number(n.time_budget_s)},
  };
  out["order_effect"] = n.order_effect ? order_effect_to_json(*n.order_effect) : json(nullptr);
  return out;
}

[[noreturn]] void bad_field(const char* key, const std::string& why) {
  throw std::invalid_argument(std::string("eval_result_from_json: field '") + key + "': " + why);
}

// The inverse of number(); null reads as NaN because other writers (nlohmann's own dump) emit null
// for non-finite values.
double number_from(const json& value, const char* key) {
  if (value.is_number()) return value.get<double>();
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "nan" || text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf" || text == "+inf" || text == "Infinity") {
      return std::numeric_limits<double>::infinity();
    }
    if (text == "-inf" || text == "-Infinity") return -std::numeric_limits<double>::infinity();
    bad_field(key, "'" + text + "' is not a number");
  }
  bad_field(key, std::string("expected a number, got ") + value.type_name());
}

// Absent or null keys leave `out` unchanged, so records written by older versions still load.
const json* find(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

void read(const json& object, const char* key, double& out) {
  if (auto it = object.find(key); it != object.end()) out = number_from(*it, key);
}

// For keys whose null means "not measured" (the default stays), unlike read()'s null-is-NaN.
void read_measured(const json& object, const char* key, double& out) {
  if (const json* value = find(object, key)) out = number_from(*value, key);
}

// Whether the integer `value` lies in [lo, hi]. get<int>() would wrap a larger one silently.
bool integer_within(const json& value, std::int64_t lo, std::int64_t hi) {
  if (value.is_number_unsigned())
    return value.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi);
  return value.is_number_integer() && value.get<std::int64_t>() >= lo &&
         value.get<std::int64_t>() <= hi;
}

void read(const json& object, const char* key, int& out) {
  const json* value = find(object, key);
  if (!value) return;
  if (!integer_within(*value, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()))
    bad_field(key, "expected an integer of 32 bits");
  out = value->get<int>();
}

void read(const json& object, const char* key, std::int64_t& out) {
  const json* value = find(object, key);
  if (!value) return;
  if (!integer_within(*value, 0, std::numeric_limits<std::int64_t>::max()))
    bad_field(key, "expected a non-negative integer of 64 bits");
  out = value->get<std::int64_t>();
}

void read(const json& object, const char* key, bool& out) {
  const json* value = find(object, key);
  if (!value) return;
  if (!value->is_boolean()) bad_field(key, "expected true or false");
  out = value->get<bool>();
}

void read(const json& object, const char* key, std::string& out) {
  const json* value = find(object, key);
  if (!value) return;
  if (!value->is_string()) bad_field(key, "expected a string");
  out = value->get<std::string>();
}

void read(const json& object, const char* key, std::vector<std::string>& out) {
  const json* value = find(object, key);
  if (!value) return;
  if (!value->is_array()) bad_field(key, "expected an array of strings");
  out.clear();
  for (const json& item : *value) {
    if (!item.is_string()) bad_field(key, "expected an array of strings");
    out.push_back(item.get<std::string>());
  }
}

std::optional<double> read_optional_number(const json& object, const char* key) {
  const json* value = find(object, key);
  if (!value) return std::nullopt;
  return number_from(*value, key);
}

std::optional<std::pair<double, double>> read_ci(const json& object, const char* key) {
  const json* ci = find(object, key);
  if (!ci) return std::nullopt;
  if (!ci->is_array() || ci->size() != 2) bad_field(key, "expected [lo, hi]");
  return std::pair(number_from((*ci)[0], key), number_from((*ci)[1], key));
}

const json& require_object(const json& value, const char* key) {
  if (!value.is_object())
    bad_field(key, std::string("expected an object, got ") + value.type_name());
  return value;
}

std::optional<TimingSummary> timing_from_json(const json& object, const char* key) {
  const json* value = find(object, key);
  if (!value) return std::nullopt;
  const json& timing_json = require_object(*value, key);
  TimingSummary timing;
  read(timing_json, "median_ms", timing.median_ms);
  read(timing_json, "p25_ms", timing.p25_ms);
  read(timing_json, "p75_ms", timing.p75_ms);
  read(timing_json, "min_ms", timing.min_ms);
  read(timing_json, "mean_ms", timing.mean_ms);
  read(timing_json, "iters", timing.iters);
  // Records before adaptive timing have no "used": their statistics were over every call.
  timing.used = timing.iters;
  read(timing_json, "used", timing.used);
  read_measured(timing_json, "wall_median_ms", timing.wall_median_ms);
  const auto read_numbers = [&](const char* name, std::vector<double>& out) {
    if (const json* values = find(timing_json, name)) {
      if (!values->is_array()) bad_field(name, "expected an array");
      out.reserve(values->size());
      for (const json& v : *values) out.push_back(number_from(v, name));
    }
  };
  read_numbers("samples_ms", timing.samples_ms);
  read_numbers("wait_ms", timing.wait_ms);
  read_numbers("offcpu_ms", timing.offcpu_ms);
  read_numbers("cpu_ms", timing.cpu_ms);
  read_numbers("adjusted_ms", timing.adjusted_ms);
  if (const json* flags = find(timing_json, "disturbed")) {
    if (!flags->is_array()) bad_field("disturbed", "expected an array");
    for (const json& f : *flags) {
      if (!f.is_boolean() && !integer_within(f, 0, 2)) bad_field("disturbed", "expected 0, 1 or 2");
      timing.disturbed.push_back(f.is_boolean() ? f.get<bool>() : f.get<std::uint8_t>());
    }
  }
  return timing;
}

std::optional<NoiseReport> noise_from_json(const json& object) {
  const json* value = find(object, "noise");
  if (!value) return std::nullopt;
  const json& in = require_object(*value, "noise");
  NoiseReport n;
  read(in, "cv_candidate", n.cv_candidate);
  read(in, "cv_baseline", n.cv_baseline);
  read(in, "steal_pct", n.steal_pct);
  read(in, "calls", n.calls);
  read(in, "disturbed_calls", n.disturbed_calls);
  read(in, "candidate_disturbed", n.candidate_disturbed);
  read(in, "baseline_disturbed", n.baseline_disturbed);
  read(in, "unadjustable_calls", n.unadjustable_calls);
  read(in, "clean_pairs", n.clean_pairs);
  read(in, "accounted", n.accounted);
  read(in, "estimator", n.estimator);
  read(in, "ci_half_width_pct", n.ci_half_width_pct);
  read(in, "stable", n.stable);
  read(in, "unstable_reason", n.unstable_reason);
  read(in, "stop_reason", n.stop_reason);
  read(in, "min_iters", n.min_iters);
  read(in, "max_iters", n.max_iters);
  read(in, "time_budget_s", n.time_budget_s);
  if (const json* order = find(in, "order_effect"); order && !order->is_null()) {
    const json& o = require_object(*order, "order_effect");
    OrderEffect e;
    read(o, "candidate_first", e.candidate_first);
    e.candidate_first_ci95 = read_ci(o, "candidate_first_ci95").value_or(e.candidate_first_ci95);
    read(o, "candidate_first_pairs", e.candidate_first_pairs);
    read(o, "baseline_first", e.baseline_first);
    e.baseline_first_ci95 = read_ci(o, "baseline_first_ci95").value_or(e.baseline_first_ci95);
    read(o, "baseline_first_pairs", e.baseline_first_pairs);
    read(o, "split", e.split);
    read(o, "carryover", e.carryover);
    e.carryover_ci95 = read_ci(o, "carryover_ci95").value_or(e.carryover_ci95);
    read(o, "couples", e.couples);
    n.order_effect = e;
  }
  return n;
}

}  // namespace

json expert_to_json(const ExpertSummary& e) {
  return {{"config", e.config},
          {"tuned", e.tuned},
          {"status", status_name(e.status)},
          {"error", e.error},
          {"median_ms", optional_number(e.median_ms)},
          {"speedup", optional_number(e.speedup)},
          {"speedup_ci95", e.speedup_ci95 ? json::array({number(e.speedup_ci95->first),
                                                         number(e.speedup_ci95->second)})
                                          : json(nullptr)},
          {"speedup_verdict", e.speedup_verdict.empty() ? json(nullptr) : json(e.speedup_verdict)},
          {"unstable_reason", e.unstable_reason.empty() ? json(nullptr) : json(e.unstable_reason)},
          {"baseline_median_ms", optional_number(e.baseline_median_ms)},
          {"gflops", optional_number(e.gflops)},
          {"pct_roofline", optional_number(e.pct_roofline)}};
}

namespace {

std::optional<ExpertSummary> expert_from_json(const json& in) {
  const json* value = find(in, "expert");
  if (!value) return std::nullopt;
  const json& object = require_object(*value, "expert");
  ExpertSummary e;
  read(object, "config", e.config);
  read(object, "tuned", e.tuned);
  std::string status;
  read(object, "status", status);
  const std::optional<Status> parsed = parse_status(status);
  if (!parsed) bad_field("expert", "unknown status '" + status + "'");
  e.status = *parsed;
  read(object, "error", e.error);
  e.median_ms = read_optional_number(object, "median_ms");
  e.speedup = read_optional_number(object, "speedup");
  e.speedup_ci95 = read_ci(object, "speedup_ci95");
  read(object, "speedup_verdict", e.speedup_verdict);
  read(object, "unstable_reason", e.unstable_reason);
  e.baseline_median_ms = read_optional_number(object, "baseline_median_ms");
  e.gflops = read_optional_number(object, "gflops");
  e.pct_roofline = read_optional_number(object, "pct_roofline");
  return e;
}

}  // namespace

nlohmann::json to_json(const EvalResult& result, const JsonOptions& options) {
  const CorrectnessReport& correctness = result.correctness;
  json out = {
      {"kind", result.kind},
      {"workload", result.workload},
      {"size", result.size},
      {"threads", result.threads},
      {"status", status_name(result.status)},
      {"error", result.error},
      {"diagnostics", result.diagnostics},
      {"candidate_path", result.candidate_path},
      {"candidate_hash", result.candidate_hash},
      {"correctness",
       {
           {"passed", correctness.passed},
           {"trials", correctness.trials},
           {"seeds", correctness.seeds},
           {"max_abs_err", optional_number(correctness.measured(&CorrectnessReport::max_abs_err))},
           {"max_rel_err", optional_number(correctness.measured(&CorrectnessReport::max_rel_err))},
           {"rel_l2_err", optional_number(correctness.measured(&CorrectnessReport::rel_l2_err))},
           {"detail", correctness.detail},
       }},
      {"candidate", result.candidate ? timing_to_json(*result.candidate, options.include_samples)
                                     : json(nullptr)},
      {"baseline",
       result.baseline ? timing_to_json(*result.baseline, options.include_samples) : json(nullptr)},
      {"speedup", optional_number(result.speedup)},
      {"speedup_ci95", result.speedup_ci95 ? json::array({number(result.speedup_ci95->first),
                                                          number(result.speedup_ci95->second)})
                                           : json(nullptr)},
      {"speedup_verdict",
       result.speedup_verdict.empty() ? json(nullptr) : json(result.speedup_verdict)},
      {"noise", result.noise ? noise_to_json(*result.noise) : json(nullptr)},
      {"baseline_path", result.baseline_library_plan},
      {"warmup", result.warmup},
      {"wall_s", number(result.wall_s)},
      {"created_at", result.created_at},
      {"suspicious", result.suspicious.empty() ? json(nullptr) : json(result.suspicious)},
      {"sandbox", result.sandbox ? json{{"layers", result.sandbox->layers},
                                        {"missing", result.sandbox->missing}}
                                 : json(nullptr)},
      {"analysis",
       result.analysis_json.empty() ? json(nullptr) : json::parse(result.analysis_json)},
  };
  // Only a recorded result has an id; the record's own full_json is written before it has one.
  if (result.id != 0) out["id"] = result.id;
  if (options.include_source) out["candidate_source"] = result.candidate_source;
  if (result.library_ceiling) {
    json parts = json::array();
    for (const LibraryCeilingPart& p : result.library_ceiling->parts)
      parts.push_back({{"call", p.call},
                       {"count", p.count},
                       {"flops", number(p.flops)},
                       {"path", p.path},
                       {"best_ms", number(p.best_ms)}});
    out["library_ceiling"] = {{"ms", number(result.library_ceiling->ms)},
                              {"parts", parts},
                              {"retimed", result.library_ceiling->retimed}};
  } else {
    out["library_ceiling"] = nullptr;
  }
  // kbench run's records carry the expert beside the baseline: null where the workload has none.
  if (result.kind == "run") {
    out["expert"] = result.expert ? expert_to_json(*result.expert) : json(nullptr);
    out["expert_speedup"] = result.expert ? optional_number(result.expert->speedup) : json(nullptr);
  }

  // Utilization is flattened to the top level so scripts read result["gflops"] directly.
  const std::optional<Utilization>& util = result.utilization;
  out["gflops"] = util ? number(util->gflops) : json(nullptr);
  out["pct_peak_flops"] = util ? number(util->pct_peak_flops) : json(nullptr);
  out["gbps"] = util ? number(util->gbps) : json(nullptr);
  out["pct_peak_bw"] = util ? number(util->pct_peak_bw) : json(nullptr);
  out["peak_gflops"] = util ? number(util->peak_gflops) : json(nullptr);
  out["peak_gbps"] = util ? number(util->peak_gbps) : json(nullptr);
  out["peak_flops_kind"] = util ? json(util->peak_flops_kind) : json(nullptr);
  // The roofline: null where the probe measured no roofs (bound empty).
  const bool roofed = util && !util->bound.empty();
  out["math"] = util ? json(util->math) : json(nullptr);
  out["intensity"] = util ? number(util->intensity) : json(nullptr);
  out["balance"] = roofed ? number(util->balance) : json(nullptr);
  out["bound"] = roofed ? json(util->bound) : json(nullptr);
  out["roofline_ms"] = roofed ? number(util->roofline_ms) : json(nullptr);
  out["pct_roofline"] = roofed ? number(util->pct_roofline) : json(nullptr);
  const bool library = util && util->library_ms > 0;
  out["library_ms"] = library ? number(util->library_ms) : json(nullptr);
  out["library_gflops"] = library ? number(util->library_gflops) : json(nullptr);
  out["library_method"] = library ? json(util->library_method) : json(nullptr);
  out["pct_library"] = library ? number(util->pct_library) : json(nullptr);
  return out;
}

EvalResult eval_result_from_json(const nlohmann::json& in) {
  if (!in.is_object()) {
    throw std::invalid_argument(std::string("eval_result_from_json: expected an object, got ") +
                                in.type_name());
  }
  EvalResult result;
  read(in, "id", result.id);
  read(in, "kind", result.kind);
  read(in, "workload", result.workload);
  read(in, "size", result.size);
  read(in, "threads", result.threads);
  std::string status = status_name(result.status);
  read(in, "status", status);
  if (auto parsed = parse_status(status)) {
    result.status = *parsed;
  } else {
    bad_field("status", "unknown status '" + status + "'");
  }
  read(in, "error", result.error);
  read(in, "diagnostics", result.diagnostics);
  read(in, "candidate_path", result.candidate_path);
  read(in, "candidate_source", result.candidate_source);
  read(in, "candidate_hash", result.candidate_hash);

  if (const json* value = find(in, "correctness")) {
    const json& correctness_json = require_object(*value, "correctness");
    CorrectnessReport& correctness = result.correctness;
    read(correctness_json, "passed", correctness.passed);
    read(correctness_json, "trials", correctness.trials);
    if (const json* seeds = find(correctness_json, "seeds")) {
      if (!seeds->is_array()) bad_field("seeds", "expected an array");
      for (const json& seed : *seeds) {
        if (!seed.is_number_unsigned()) bad_field("seeds", "expected non-negative integers");
        correctness.seeds.push_back(seed.get<std::uint64_t>());
      }
    }
    // Where outputs were compared, null is NaN (as other writers spell it); where none were, it
    // is "not measured", and the metric stays 0.
    const auto read_error = [&](const char* key, double& out) {
      if (correctness.trials > 0)
        read(correctness_json, key, out);
      else
        read_measured(correctness_json, key, out);
    };
    read_error("max_abs_err", correctness.max_abs_err);
    read_error("max_rel_err", correctness.max_rel_err);
    read_error("rel_l2_err", correctness.rel_l2_err);
    read(correctness_json, "detail", correctness.detail);
  }

  result.candidate = timing_from_json(in, "candidate");
  result.baseline = timing_from_json(in, "baseline");
  result.speedup = read_optional_number(in, "speedup");
  if (const json* ci = find(in, "speedup_ci95")) {
    if (!ci->is_array() || ci->size() != 2) bad_field("speedup_ci95", "expected [lo, hi]");
    result.speedup_ci95.emplace(number_from((*ci)[0], "speedup_ci95"),
                                number_from((*ci)[1], "speedup_ci95"));
  }

  // to_json() writes either all utilization keys or none as null; any non-null one means measured.
  constexpr std::array<const char*, 7> kUtilizationKeys = {
      "gflops",      "pct_peak_flops", "gbps",           "pct_peak_bw",
      "peak_gflops", "peak_gbps",      "peak_flops_kind"};
  for (const char* key : kUtilizationKeys) {
    if (find(in, key)) {
      Utilization util;
      read(in, "gflops", util.gflops);
      read(in, "pct_peak_flops", util.pct_peak_flops);
      read(in, "gbps", util.gbps);
      read(in, "pct_peak_bw", util.pct_peak_bw);
      read(in, "peak_gflops", util.peak_gflops);
      read(in, "peak_gbps", util.peak_gbps);
      read(in, "peak_flops_kind", util.peak_flops_kind);
      read(in, "math", util.math);
      read_measured(in, "intensity", util.intensity);
      read_measured(in, "balance", util.balance);
      read(in, "bound", util.bound);
      read_measured(in, "roofline_ms", util.roofline_ms);
      read_measured(in, "pct_roofline", util.pct_roofline);
      read_measured(in, "library_ms", util.library_ms);
      read_measured(in, "library_gflops", util.library_gflops);
      read(in, "library_method", util.library_method);
      read_measured(in, "pct_library", util.pct_library);
      result.utilization = std::move(util);
      break;
    }
  }

  read(in, "speedup_verdict", result.speedup_verdict);
  result.noise = noise_from_json(in);
  read(in, "baseline_path", result.baseline_library_plan);
  read(in, "warmup", result.warmup);
  read(in, "wall_s", result.wall_s);
  read(in, "created_at", result.created_at);
  read(in, "suspicious", result.suspicious);
  result.expert = expert_from_json(in);
  if (const json* analysis = find(in, "analysis"))
    result.analysis_json = require_object(*analysis, "analysis").dump();
  if (const json* sandbox = find(in, "sandbox")) {
    const json& object = require_object(*sandbox, "sandbox");
    SandboxReport report;
    read(object, "layers", report.layers);
    read(object, "missing", report.missing);
    result.sandbox = std::move(report);
  }
  if (const json* ceiling = find(in, "library_ceiling")) {
    const json& object = require_object(*ceiling, "library_ceiling");
    LibraryCeiling c;
    read(object, "ms", c.ms);
    if (const json* parts = find(object, "parts")) {
      if (!parts->is_array()) bad_field("library_ceiling", "parts: expected an array");
      for (const json& p : *parts) {
        LibraryCeilingPart part;
        read(p, "call", part.call);
        read(p, "count", part.count);
        read(p, "flops", part.flops);
        read(p, "path", part.path);
        read(p, "best_ms", part.best_ms);
        c.parts.push_back(std::move(part));
      }
    }
    read(object, "retimed", c.retimed);
    result.library_ceiling = std::move(c);
  }
  return result;
}

std::string dump_json(const nlohmann::json& json_value, int indent) {
  return json_value.dump(indent, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace kbench
