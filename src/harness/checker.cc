// allclose + relative-L2 + finiteness, in double so the check itself adds no rounding.
#include "harness/checker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kbench {

CheckResult check_close(const float* out, const float* oracle, std::size_t n, const Tolerance& tol,
                        const std::string& tensor_name) {
  CheckResult r;
  double diff_sq = 0, ref_sq = 0;
  std::size_t worst_allclose = n;  // index with the largest excess over the allclose bound
  double worst_excess = 0;
  std::size_t first_nonfinite = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double o = out[i], ref = oracle[i];
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
    const double excess = abs_err - (tol.atol + tol.rtol * std::fabs(ref));
    if (excess > worst_excess) {
      worst_excess = excess;
      worst_allclose = i;
    }
    diff_sq += abs_err * abs_err;
    ref_sq += ref * ref;
  }
  if (ref_sq > 0) {
    r.rel_l2_err = std::sqrt(diff_sq / ref_sq);
  } else {
    r.rel_l2_err = diff_sq > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }

  char buf[256];
  if (first_nonfinite != n) {
    std::snprintf(buf, sizeof buf, "%s[%zu] = %g where the oracle has %g (non-finite mismatch)",
                  tensor_name.c_str(), first_nonfinite, static_cast<double>(out[first_nonfinite]),
                  static_cast<double>(oracle[first_nonfinite]));
    r.detail = buf;
  } else if (worst_allclose != n) {
    std::snprintf(buf, sizeof buf,
                  "%s[%zu] = %.6g, oracle %.6g: |diff| %.3g > atol %g + rtol %g * |oracle|",
                  tensor_name.c_str(), worst_allclose, static_cast<double>(out[worst_allclose]),
                  static_cast<double>(oracle[worst_allclose]),
                  std::fabs(static_cast<double>(out[worst_allclose]) - oracle[worst_allclose]),
                  tol.atol, tol.rtol);
    r.detail = buf;
  } else if (!(r.rel_l2_err <= tol.max_rel_l2)) {
    std::snprintf(buf, sizeof buf, "%s: relative L2 error %.3g exceeds %g", tensor_name.c_str(),
                  r.rel_l2_err, tol.max_rel_l2);
    r.detail = buf;
  }
  r.passed = r.detail.empty();
  return r;
}

CheckResult check_outputs(const Problem& problem, const std::vector<std::vector<float>>& outputs,
                          const std::vector<std::vector<float>>& oracle, const Tolerance& tol) {
  CheckResult all;
  all.passed = true;
  for (std::size_t i = 0; i < problem.outputs.size(); ++i) {
    const std::string& name = problem.outputs[i].name;
    CheckResult c;
    if (i >= outputs.size() || i >= oracle.size() || outputs[i].size() != oracle[i].size()) {
      c.detail = name + ": " + std::to_string(i < outputs.size() ? outputs[i].size() : 0) +
                 " values where " + std::to_string(i < oracle.size() ? oracle[i].size() : 0) +
                 " were expected";
    } else {
      c = check_close(outputs[i].data(), oracle[i].data(), oracle[i].size(), tol, name);
    }
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

void merge_check(CorrectnessReport& report, const CheckResult& check) {
  report.max_abs_err = std::max(report.max_abs_err, check.max_abs_err);
  report.max_rel_err = std::max(report.max_rel_err, check.max_rel_err);
  report.rel_l2_err = std::max(report.rel_l2_err, check.rel_l2_err);
  if (!check.passed && report.detail.empty()) report.detail = check.detail;
}

std::string rule_text(const Tolerance& tol) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "every element |out - oracle| <= %g + %g * |oracle|, ||out - oracle|| / ||oracle|| "
                "<= %g, and NaN/Inf only where the fp32 oracle has the same value",
                tol.atol, tol.rtol, tol.max_rel_l2);
  return buf;
}

}  // namespace kbench
