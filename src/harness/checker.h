// The correctness rule of `kbench eval`, as one pure function over f32 values, so the same code judges
// candidates, baselines in tests and outputs imported from other frameworks.
#pragma once

#include <cstddef>
#include <string>

#include "workloads/workload.h"

namespace kbench {

struct CheckResult {
  bool passed = false;
  double max_abs_err = 0;
  double max_rel_err = 0;  // over elements whose |oracle| > atol (relative error of tiny values means little)
  double rel_l2_err = 0;   // ||out - oracle|| / ||oracle|| (0 when both are 0; inf when only oracle is 0)
  std::string detail;      // empty when passed; else the first failed rule and the worst element
};

// Compares `out` against `oracle` (n values each) under `tol`. `tensor_name` appears in `detail`.
CheckResult check_close(const float* out, const float* oracle, std::size_t n, const Tolerance& tol,
                        const std::string& tensor_name);

}  // namespace kbench
