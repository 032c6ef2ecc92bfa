// Tensor checks of the matmul-shaped entry points.
#include "ops/tensor_checks.h"

#include <iterator>

namespace kbench::ops {

bool matches(const kb_tensor& t, kb_dtype dtype, std::initializer_list<std::int64_t> shape) {
  if (shape.size() > std::size(t.shape)) return false;  // beyond the ABI's rank limit of 8
  if (t.dtype != dtype || t.rank != static_cast<std::int32_t>(shape.size())) return false;
  std::int32_t axis = 0;
  for (const std::int64_t extent : shape) {
    if (t.shape[axis++] != extent) return false;
  }
  return true;
}

bool is_float_output(const kb_tensor& t, std::initializer_list<std::int64_t> shape) {
  return matches(t, KB_BF16, shape) || matches(t, KB_F32, shape);
}

}  // namespace kbench::ops
