// The pieces shared by the KernelBench level-2 workloads that are one linear layer plus an
// elementwise epilogue (19k, 20k, 27k, 30k, 35k, 37k, 44k, 47k, 48k): the call's tensor checks,
// the double-precision reference around a workload's epilogue, and the driver of the bf16 program
// (the matmul's bf16 result, then the epilogue's ops each rounded to bf16).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "kbench/kernel.h"

namespace kbench::linear_epilogue {

// x (M, K) @ weight (K, N) -> out (M, N).
struct LinearShape {
  std::int64_t m, k, n;  // batch_size, in_features, out_features
};

// The extent of an input after x and weight: one value per output column (N,), or one (1,).
enum class Extent { kColumns, kScalar };

// The extents of a call whose tensors are x bf16 (M, K), weight bf16 (K, N), then one bf16 vector
// per entry of `vectors` in its extent, and one float output (M, N) (bf16 or f32); or nullopt.
std::optional<LinearShape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                         const kb_tensor* out, std::int32_t num_outputs,
                                         std::initializer_list<Extent> vectors);

// The inputs after weight, widened: vectors[i][j] is input 2 + i at column j (index 0 for a
// scalar input).
template <class T>
using Vectors = std::vector<std::vector<T>>;

// The truth: y = x @ weight summed in double, then out[i, j] = epilogue(y[i, j], j, vectors) in
// double, stored as f32. Returns nonzero unless the call matches `vectors` and out is f32.
int reference(const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
              std::int32_t num_outputs, std::initializer_list<Extent> vectors,
              double (*epilogue)(double y, std::int64_t j, const Vectors<double>& v));

// The original program's arithmetic: y = bf16(x @ weight) (a JAX matmul of bf16 operands holds a
// bf16 result), then out[i, j] = ops(y[i, j], j, vectors), where `ops` rounds with bf16r after
// every op the program holds in bf16; stored in out's dtype.
int bf16_program(const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
                 std::int32_t num_outputs, std::initializer_list<Extent> vectors,
                 float (*ops)(float y, std::int64_t j, const Vectors<float>& v));

// A bf16 tensor's value: round to nearest even, as every op on a bf16 tensor does.
inline float bf16r(float v) {
  return round_to_bf16(v);
}

}  // namespace kbench::linear_epilogue
