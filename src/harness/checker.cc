// allclose + relative-L2 + finiteness, in double so the check itself adds no rounding.
//
// Every timed output of an eval goes through here (hundreds of MB per call at the cpu size), so the
// rule runs in two passes over values read in place: a branch-free pass in eight double lanes that
// the compiler vectorizes and that settles the common case (all finite, every element within the
// allclose bound), and the exact element-by-element pass, which names the worst element, only when
// the first finds something wrong. Bit-identical tensors pass without either pass.
#include "harness/checker.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/tensor.h"

namespace kbench {
namespace {

// Element loaders: value i as double, widened through f32 exactly as to_f32 does.
struct LoadF32 {
  const float* p;
  double operator()(std::size_t i) const { return p[i]; }
};
struct LoadBf16 {
  const std::uint16_t* p;
  double operator()(std::size_t i) const { return kb_bf16_to_f32(p[i]); }
};
struct LoadI32 {
  const std::int32_t* p;
  double operator()(std::size_t i) const { return static_cast<float>(p[i]); }
};
// No term magnitudes: that part of every bound is zero.
struct LoadZero {
  double operator()(std::size_t /*i*/) const { return 0; }
};

// Relative L2 error from the summed squares of the differences and of the reference: a zero
// reference has no scale, so any difference at all is infinitely wrong and none is exact.
double relative_l2(double diff_sq, double ref_sq) {
  if (ref_sq > 0) return std::sqrt(diff_sq / ref_sq);
  return diff_sq > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

// Both passes word a failed L2 bound alike, so a result reads the same whichever pass settled it.
std::string rel_l2_exceeded_detail(const std::string& tensor_name, double rel_l2_err,
                                   double max_rel_l2) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: relative L2 error %.3g exceeds %g", tensor_name.c_str(),
                rel_l2_err, max_rel_l2);
  return buf;
}

// The rule element by element: the reference implementation, and the one that names the worst
// element.
template <typename Out, typename Ref, typename Mag>
CheckResult exact_check(Out out, Ref oracle, Mag magnitude, std::size_t n, const Tolerance& tol,
                        const std::string& tensor_name) {
  CheckResult r;
  double diff_sq = 0, ref_sq = 0;
  std::size_t worst_allclose = n;  // index with the largest excess over the allclose bound
  double worst_excess = 0;
  std::size_t first_nonfinite = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double o = out(i), ref = oracle(i);
    if (!std::isfinite(o)) {
      // NaN/Inf is only acceptable where the oracle has the very same non-finite value.
      const bool same = std::isfinite(ref) ? false : std::isnan(ref) ? std::isnan(o) : o == ref;
      if (!same && first_nonfinite == n) first_nonfinite = i;
      if (!same) r.max_abs_err = std::numeric_limits<double>::infinity();
      continue;
    }
    if (!std::isfinite(ref)) {
      if (first_nonfinite == n) first_nonfinite = i;
      r.max_abs_err = std::numeric_limits<double>::infinity();
      continue;
    }
    const double abs_err = std::fabs(o - ref);
    if (abs_err > r.max_abs_err) r.max_abs_err = abs_err;
    if (std::fabs(ref) > tol.atol && abs_err / std::fabs(ref) > r.max_rel_err)
      r.max_rel_err = abs_err / std::fabs(ref);
    const double excess =
        abs_err - (tol.atol + tol.rtol * std::fabs(ref) + tol.term_rtol * magnitude(i));
    if (excess > worst_excess) {
      worst_excess = excess;
      worst_allclose = i;
    }
    diff_sq += abs_err * abs_err;
    ref_sq += ref * ref;
  }
  r.rel_l2_err = relative_l2(diff_sq, ref_sq);

  char buf[256];
  if (first_nonfinite != n) {
    std::snprintf(buf, sizeof buf, "%s[%zu] = %g where the oracle has %g (non-finite mismatch)",
                  tensor_name.c_str(), first_nonfinite, out(first_nonfinite),
                  oracle(first_nonfinite));
    r.detail = buf;
  } else if (worst_allclose != n && tol.term_rtol > 0) {
    std::snprintf(buf, sizeof buf,
                  "%s[%zu] = %.6g, oracle %.6g: |diff| %.3g > atol %g + rtol %g * |oracle| + "
                  "term_rtol %g * term magnitude %.4g",
                  tensor_name.c_str(), worst_allclose, out(worst_allclose), oracle(worst_allclose),
                  std::fabs(out(worst_allclose) - oracle(worst_allclose)), tol.atol, tol.rtol,
                  tol.term_rtol, magnitude(worst_allclose));
    r.detail = buf;
  } else if (worst_allclose != n) {
    std::snprintf(buf, sizeof buf,
                  "%s[%zu] = %.6g, oracle %.6g: |diff| %.3g > atol %g + rtol %g * |oracle|",
                  tensor_name.c_str(), worst_allclose, out(worst_allclose), oracle(worst_allclose),
                  std::fabs(out(worst_allclose) - oracle(worst_allclose)), tol.atol, tol.rtol);
    r.detail = buf;
  } else if (!(r.rel_l2_err <= tol.max_rel_l2)) {
    r.detail = rel_l2_exceeded_detail(tensor_name, r.rel_l2_err, tol.max_rel_l2);
  }
  r.passed = r.detail.empty();
  return r;
}

// The vectorizable pass. Returns false when some value is non-finite or some element exceeds the
// allclose bound: only the exact pass reports those. Otherwise fills `r` as exact_check would
// (maxima exactly; the sums of rel_l2_err in eight fixed lanes).
template <typename Out, typename Ref, typename Mag>
bool fast_check(Out out, Ref oracle, Mag magnitude, std::size_t n, const Tolerance& tol,
                const std::string& tensor_name, CheckResult& r) {
  constexpr std::size_t kLanes = 8;
  double diff_sq[kLanes] = {}, ref_sq[kLanes] = {}, max_abs[kLanes] = {}, max_rel[kLanes] = {},
         max_excess[kLanes] = {}, poison[kLanes] = {};
  const double atol = tol.atol, rtol = tol.rtol, term_rtol = tol.term_rtol;
  const auto lane = [&](std::size_t l, double o, double ref, double mag) {
    const double abs_err = std::fabs(o - ref), abs_ref = std::fabs(ref);
    // x * 0 is NaN exactly when x is NaN or infinite: one add flags any non-finite value.
    poison[l] += o * 0.0 + ref * 0.0;
    max_abs[l] = abs_err > max_abs[l] ? abs_err : max_abs[l];
    const double rel = abs_ref > atol ? abs_err / abs_ref : 0.0;
    max_rel[l] = rel > max_rel[l] ? rel : max_rel[l];
    const double excess = abs_err - (atol + rtol * abs_ref + term_rtol * mag);
    max_excess[l] = excess > max_excess[l] ? excess : max_excess[l];
    diff_sq[l] += abs_err * abs_err;
    ref_sq[l] += ref * ref;
  };
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) lane(l, out(i + l), oracle(i + l), magnitude(i + l));
  for (std::size_t l = 0; i < n; ++i, ++l) lane(l, out(i), oracle(i), magnitude(i));

  double diff_total = 0, ref_total = 0;
  for (std::size_t l = 0; l < kLanes; ++l) {
    if (std::isnan(poison[l]) || max_excess[l] > 0) return false;
    r.max_abs_err = std::max(r.max_abs_err, max_abs[l]);
    r.max_rel_err = std::max(r.max_rel_err, max_rel[l]);
    diff_total += diff_sq[l];
    ref_total += ref_sq[l];
  }
  r.rel_l2_err = relative_l2(diff_total, ref_total);
  if (!(r.rel_l2_err <= tol.max_rel_l2))
    r.detail = rel_l2_exceeded_detail(tensor_name, r.rel_l2_err, tol.max_rel_l2);
  r.passed = r.detail.empty();
  return true;
}

template <typename Out, typename Ref, typename Mag>
CheckResult check_loaded(Out out, Ref oracle, Mag magnitude, std::size_t n, const Tolerance& tol,
                         const std::string& tensor_name) {
  CheckResult r;
  if (fast_check(out, oracle, magnitude, n, tol, tensor_name, r)) return r;
  return exact_check(out, oracle, magnitude, n, tol, tensor_name);
}

// The same with the magnitudes, when there are any and the rule uses them, or none.
template <typename Out, typename Ref>
CheckResult check_loaded(Out out, Ref oracle, const float* magnitude, std::size_t n,
                         const Tolerance& tol, const std::string& tensor_name) {
  if (magnitude != nullptr && tol.term_rtol > 0)
    return check_loaded(out, oracle, LoadF32{magnitude}, n, tol, tensor_name);
  return check_loaded(out, oracle, LoadZero{}, n, tol, tensor_name);
}

template <typename Out>
CheckResult check_against(Out out, const kb_tensor& oracle, const float* magnitude, std::size_t n,
                          const Tolerance& tol, const std::string& tensor_name) {
  switch (oracle.dtype) {
    case KB_BF16:
      return check_loaded(out, LoadBf16{static_cast<const std::uint16_t*>(oracle.data)}, magnitude,
                          n, tol, tensor_name);
    case KB_I32:
      return check_loaded(out, LoadI32{static_cast<const std::int32_t*>(oracle.data)}, magnitude, n,
                          tol, tensor_name);
    case KB_F32:
      break;
  }
  return check_loaded(out, LoadF32{static_cast<const float*>(oracle.data)}, magnitude, n, tol,
                      tensor_name);
}

}  // namespace

CheckResult check_close(const float* out, const float* oracle, std::size_t n, const Tolerance& tol,
                        const std::string& tensor_name, const float* magnitude) {
  return check_loaded(LoadF32{out}, LoadF32{oracle}, magnitude, n, tol, tensor_name);
}

CheckResult check_close(const kb_tensor& out, const kb_tensor& oracle, const Tolerance& tol,
                        const std::string& tensor_name, const kb_tensor* magnitude) {
  const auto n = static_cast<std::size_t>(kb_numel(&out));
  if (n != static_cast<std::size_t>(kb_numel(&oracle))) {
    CheckResult r;
    r.detail = tensor_name + ": " + std::to_string(n) + " values where " +
               std::to_string(kb_numel(&oracle)) + " were expected";
    return r;
  }
  if (magnitude != nullptr &&
      (magnitude->dtype != KB_F32 || static_cast<std::size_t>(kb_numel(magnitude)) != n))
    throw std::logic_error(tensor_name + ": term magnitudes must be f32 values, one per element");
  const float* mag = magnitude != nullptr ? static_cast<const float*>(magnitude->data) : nullptr;
  // The same bits are the same values: every element passes with zero error. The common case of an
  // A/A run, and memcmp stops at the first difference otherwise.
  if (out.dtype == oracle.dtype &&
      std::memcmp(out.data, oracle.data, n * dtype_size(out.dtype)) == 0)
    return {.passed = true};
  switch (out.dtype) {
    case KB_BF16:
      return check_against(LoadBf16{static_cast<const std::uint16_t*>(out.data)}, oracle, mag, n,
                           tol, tensor_name);
    case KB_I32:
      return check_against(LoadI32{static_cast<const std::int32_t*>(out.data)}, oracle, mag, n, tol,
                           tensor_name);
    case KB_F32:
      break;
  }
  return check_against(LoadF32{static_cast<const float*>(out.data)}, oracle, mag, n, tol,
                       tensor_name);
}

namespace {

// Merges per-output results worst-case; `check_one(i)` checks output i.
template <typename CheckOne>
CheckResult merge_outputs(const Problem& problem, CheckOne&& check_one) {
  CheckResult all;
  all.passed = true;
  for (std::size_t i = 0; i < problem.outputs.size(); ++i) {
    const CheckResult c = check_one(i, problem.outputs[i].name);
    all.max_abs_err = std::max(all.max_abs_err, c.max_abs_err);
    all.max_rel_err = std::max(all.max_rel_err, c.max_rel_err);
    all.rel_l2_err = std::max(all.rel_l2_err, c.rel_l2_err);
    if (!c.passed && all.passed) {
      all.passed = false;
      all.detail = c.detail;
    }
  }
  return all;
}

}  // namespace

CheckResult check_outputs(const Problem& problem, const std::vector<std::vector<float>>& outputs,
                          const std::vector<std::vector<float>>& oracle, const Tolerance& tol,
                          const std::vector<std::vector<float>>& magnitudes) {
  return merge_outputs(problem, [&](std::size_t i, const std::string& name) {
    if (i >= outputs.size() || i >= oracle.size() || outputs[i].size() != oracle[i].size()) {
      CheckResult c;
      c.detail = name + ": " + std::to_string(i < outputs.size() ? outputs[i].size() : 0) +
                 " values where " + std::to_string(i < oracle.size() ? oracle[i].size() : 0) +
                 " were expected";
      return c;
    }
    const bool has_magnitude = i < magnitudes.size();
    if (has_magnitude && magnitudes[i].size() != oracle[i].size())
      throw std::logic_error(name + ": term magnitudes must be one value per element");
    return check_close(outputs[i].data(), oracle[i].data(), oracle[i].size(), tol, name,
                       has_magnitude ? magnitudes[i].data() : nullptr);
  });
}

CheckResult check_outputs(const Problem& problem, std::span<const kb_tensor> outputs,
                          std::span<const kb_tensor> oracle, const Tolerance& tol,
                          std::span<const kb_tensor> magnitudes) {
  return merge_outputs(problem, [&](std::size_t i, const std::string& name) {
    if (i >= outputs.size() || i >= oracle.size()) {
      CheckResult c;
      c.detail = name + ": output missing";
      return c;
    }
    return check_close(outputs[i], oracle[i], tol, name,
                       i < magnitudes.size() ? &magnitudes[i] : nullptr);
  });
}

CheckResult check_timed_outputs(const Problem& problem, std::span<const kb_tensor> outputs,
                                std::span<const kb_tensor> baseline, const Tolerance& tol,
                                const std::function<OracleOfInputs()>& oracle_of_inputs) {
  const Tolerance half{tol.atol / 2, tol.rtol / 2, tol.max_rel_l2 / 2, tol.term_rtol / 2};
  CheckResult vouched = check_outputs(problem, outputs, baseline, half);
  if (vouched.passed) return vouched;
  OracleOfInputs truth = oracle_of_inputs();
  return check_outputs(problem, outputs, views_of(truth.oracle), tol, views_of(truth.magnitudes));
}

void merge_check(CorrectnessReport& report, const CheckResult& check) {
  report.max_abs_err = std::max(report.max_abs_err, check.max_abs_err);
  report.max_rel_err = std::max(report.max_rel_err, check.max_rel_err);
  report.rel_l2_err = std::max(report.rel_l2_err, check.rel_l2_err);
  if (!check.passed && report.detail.empty()) report.detail = check.detail;
}

std::string rule_text(const Tolerance& tol) {
  char terms[128] = "";
  if (tol.term_rtol > 0)
    std::snprintf(terms, sizeof terms,
                  " + %g * (sum of |terms| the original rounds to bf16 and sums into it)",
                  tol.term_rtol);
  char buf[384];
  std::snprintf(buf, sizeof buf,
                "every element |out - oracle| <= %g + %g * |oracle|%s, ||out - oracle|| / "
                "||oracle|| <= %g, and NaN/Inf only where the fp32 oracle has the same value",
                tol.atol, tol.rtol, terms, tol.max_rel_l2);
  return buf;
}

}  // namespace kbench
