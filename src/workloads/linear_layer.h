// The linear layer y = x @ W (+ b) that the KernelBench GEMM-then-reduce workloads (21k, 23k, 24k,
// 26k, 32k, 36k, 42k, 49k) start with: its tensor checks, its double-precision reference, its
// bf16 emulation (the JAX program's bf16 matmul result, then a bf16 bias add), and the output
// stores shared by their references, baselines and bf16 programs.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kbench/kernel.h"

namespace kbench::linear {

// How the weight is laid out: (K, N) for `x @ W`, (N, K) for `x @ W.T` (nn.Linear's layout).
enum class WeightLayout { kInOut, kOutIn };

struct Shape {
  std::int64_t m = 0, k = 0, n = 0;  // rows of x, in features, out features
};

// The extents of x (M, K) @ weight (+ bias (N)) when x and weight are rank-2 bf16 tensors whose
// extents agree under `layout` and bias (when given) is a bf16 (N); nullopt otherwise.
std::optional<Shape> shape_of(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                              const kb_tensor* bias);

// y[i*N + j] = sum_p x[i,p] W[p,j] (+ b[j]), every product and sum in double: the references'
// first step.
std::vector<double> reference(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                              const kb_tensor* bias);

// The JAX program's `x @ W (+ b)` on bf16 tensors: the product accumulated in f32 and rounded to
// bf16 once (the matmul's bf16 result), then the bias added and rounded again (a separate bf16
// op). Values are f32 holding bf16 numbers. With `round_product` false the product stays f32 (a
// matmul whose result the program keeps in f32) and so does the bias add.
std::vector<float> bf16_program(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                                const kb_tensor* bias, bool round_product = true);

// Element i of a bf16 or f32 tensor := v (rounded to nearest even for bf16).
void store(kb_tensor& t, std::int64_t i, float v);

}  // namespace kbench::linear
