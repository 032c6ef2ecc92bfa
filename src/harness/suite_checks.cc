// Degenerate outputs and the bound fraction: see suite_checks.h.
#include "harness/suite_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string_view>

#include "core/bf16.h"
#include "core/input_gen.h"
#include "core/tensor.h"
#include "harness/checker.h"

namespace kbench {
namespace {

// Too few values for a Gaussian draw's RMS to be near the intended 5%.
constexpr std::size_t kMinValuesForGaussianNoise = 16;

double rms_of(const std::vector<float>& v) {
  double sum_sq = 0;
  for (float x : v) sum_sq += static_cast<double>(x) * x;
  return std::sqrt(sum_sq / static_cast<double>(std::max<std::size_t>(1, v.size())));
}

// The values in one row of an output: a slab along its first axis of extent above one (a batch of
// one leaves the heads or tokens as rows). 0 where no axis has more than one value.
std::size_t row_values(const std::vector<std::int64_t>& shape) {
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] <= 1) continue;
    std::size_t row = 1;
    for (std::size_t inner = axis + 1; inner < shape.size(); ++inner)
      row *= static_cast<std::size_t>(shape[inner]);
    return row;
  }
  return 0;
}

// Values of bf16 outputs rounded to bf16, as a kernel writing them would hold them.
void round_bf16_outputs(const Problem& problem, std::vector<std::vector<float>>& outputs) {
  for (std::size_t i = 0; i < outputs.size() && i < problem.outputs.size(); ++i)
    if (problem.outputs[i].dtype == KB_BF16)
      for (float& v : outputs[i]) v = round_to_bf16(v);
}

}  // namespace

std::vector<DegenerateOutput> degenerate_outputs(const Problem& problem,
                                                 const std::vector<std::vector<float>>& oracle,
                                                 std::uint64_t seed) {
  const auto derived = [&](const std::function<void(std::size_t, std::vector<float>&)>& change) {
    std::vector<std::vector<float>> out = oracle;
    for (std::size_t i = 0; i < out.size(); ++i) change(i, out[i]);
    round_bf16_outputs(problem, out);
    return out;
  };
  std::vector<DegenerateOutput> all;
  all.push_back({"zeros", derived([](std::size_t, std::vector<float>& v) {
                   std::fill(v.begin(), v.end(), 0.0f);
                 })});
  all.push_back({"ones", derived([](std::size_t, std::vector<float>& v) {
                   std::fill(v.begin(), v.end(), 1.0f);
                 })});
  bool all_scalar = true;
  for (const auto& v : oracle) all_scalar &= v.size() <= 1;
  if (!all_scalar) {
    all.push_back({"oracle mean", derived([](std::size_t, std::vector<float>& v) {
                     double sum = 0;
                     for (float x : v) sum += x;
                     const double n = static_cast<double>(std::max<std::size_t>(1, v.size()));
                     std::fill(v.begin(), v.end(), static_cast<float>(sum / n));
                   })});
  }
  bool has_rows = false;
  for (const TensorSpec& out : problem.outputs) has_rows |= row_values(out.shape) > 0;
  if (has_rows) {
    all.push_back({"rows permuted", derived([&](std::size_t i, std::vector<float>& v) {
                     const std::size_t row = row_values(problem.outputs[i].shape);
                     if (row == 0 || row >= v.size()) return;
                     std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(row), v.end());
                   })});
  }
  all.push_back({"oracle + 5% noise", derived([&](std::size_t i, std::vector<float>& v) {
                   const double sigma = 0.05 * rms_of(v);
                   if (v.size() < kMinValuesForGaussianNoise) {
                     for (float& x : v) x = static_cast<float>(x + sigma);
                     return;
                   }
                   std::mt19937_64 rng(seed + i);
                   std::normal_distribution<double> noise(0.0, sigma);
                   for (float& x : v) x = static_cast<float>(x + noise(rng));
                 })});
  return all;
}

std::vector<DegenerateOutput> skipped_input_outputs(ProblemInstance& instance, int threads,
                                                    bool only_cancelled) {
  const Workload& w = instance.workload();
  const Problem& problem = instance.problem();
  std::vector<DegenerateOutput> all;
  for (std::size_t i = 0; i < problem.inputs.size(); ++i) {
    const InputSpec& input = problem.inputs[i];
    const std::optional<double> typical = typical_value(input.init);
    if (!typical || (input.tensor.dtype != KB_BF16 && input.tensor.dtype != KB_F32)) continue;
    const auto listed = [&](std::span<const std::string_view> names) {
      return std::find(names.begin(), names.end(), input.tensor.name) != names.end();
    };
    const bool cancelled = listed(w.cancelled_inputs);
    if (cancelled != only_cancelled || (!only_cancelled && listed(w.inputs_below_rule))) continue;
    HostTensor replacement(input.tensor);
    kb_tensor view = replacement.view();
    fill_input(InitRule::constant(*typical), 0, 0, view);
    std::vector<std::vector<float>> out =
        to_f32(instance.run_trusted_replacing(w.baseline, threads, i, replacement));
    round_bf16_outputs(problem, out);
    char value[32];
    std::snprintf(value, sizeof value, "%g", *typical);
    all.push_back({"without " + input.tensor.name + " (at " + value + ")", std::move(out)});
  }
  return all;
}

bool passes_too_often(const DrawDependentRate& rate) {
  return rate.passed > kMaxDrawDependentPassShare * rate.draws;
}

std::vector<DrawDependentRate> draw_dependent_rates(ProblemInstance& instance, int draws,
                                                    std::uint64_t next_seed, int threads) {
  const Workload& w = instance.workload();
  const Problem& problem = instance.problem();
  std::vector<DrawDependentRate> rates;
  for (int draw = 0; draw < draws; ++draw) {
    if (draw > 0) instance.generate(next_seed + static_cast<std::uint64_t>(draw - 1));
    const auto oracle = to_f32(instance.run_trusted(w.baseline, threads, KB_F32));
    const auto magnitudes = to_f32(instance.term_magnitudes(threads));
    std::vector<DegenerateOutput> outputs = skipped_input_outputs(instance, threads);
    if (w.subsample_estimate)
      outputs.push_back({"token-subsample estimate",
                         to_f32(instance.run_trusted(w.subsample_estimate, threads, KB_BF16))});
    rates.resize(outputs.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      DrawDependentRate& rate = rates[i];
      rate.name = outputs[i].name;
      ++rate.draws;
      if (check_outputs(problem, outputs[i].outputs, oracle, w.tolerance, magnitudes).passed)
        ++rate.passed;
      rate.closest = std::min(rate.closest,
                              bound_fraction(outputs[i].outputs, oracle, w.tolerance, magnitudes));
    }
  }
  return rates;
}

double bound_fraction(const std::vector<std::vector<float>>& outputs,
                      const std::vector<std::vector<float>>& oracle, const Tolerance& tol,
                      const std::vector<std::vector<float>>& magnitudes) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (outputs.size() != oracle.size()) return kInf;
  double worst = 0;
  for (std::size_t t = 0; t < outputs.size(); ++t) {
    const std::vector<float>& out = outputs[t];
    const std::vector<float>& ref = oracle[t];
    if (out.size() != ref.size()) return kInf;
    const float* magnitude = t < magnitudes.size() && magnitudes[t].size() == ref.size()
                                 ? magnitudes[t].data()
                                 : nullptr;
    double diff_sq = 0, ref_sq = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double o = out[i], r = ref[i];
      if (!std::isfinite(o) || !std::isfinite(r)) {
        if (std::isnan(o) && std::isnan(r)) continue;
        if (o == r) continue;
        return kInf;
      }
      const double err = std::fabs(o - r);
      const double terms = magnitude != nullptr ? tol.term_rtol * magnitude[i] : 0.0;
      worst = std::max(worst, err / (tol.atol + tol.rtol * std::fabs(r) + terms));
      diff_sq += err * err;
      ref_sq += r * r;
    }
    const double rel_l2 = ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : (diff_sq > 0 ? kInf : 0.0);
    worst = std::max(worst, rel_l2 / tol.max_rel_l2);
  }
  return worst;
}

}  // namespace kbench
