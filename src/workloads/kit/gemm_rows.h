// The pieces shared by the KernelBench level-2 workloads that are one linear layer followed by a
// pass over each output row (29k, 31k, 38k, 40k, 43k, 45k, 50k): the call's tensor checks, the
// double-precision linear row and row reductions of their references, the GEMM-into-f32-rows
// driver of their baselines and the bf16-product driver of their bf16 programs.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "kbench/kernel.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/jnp_bf16.h"
#include "ops/rows.h"
#include "workloads/kit/linear.h"
#include "workloads/workload.h"

namespace kbench::gemm_rows {

using linear::Shape;
using linear::WeightLayout;

// A linear layer whose rows are normalized in G groups of N/G consecutive features.
struct GroupedShape {
  std::int64_t m, k, n, num_groups;  // batch_size, in_features, out_features, num_groups
};

// The Problem's entries every linear-layer workload begins with: config batch_size, in_features
// and out_features; inputs x (M, K) uniform[0,1) and the weight in `layout`. The caller appends its
// own config, params and inputs, sets the outputs, then calls finish_problem.
Problem linear_problem(const Shape& shape, WeightLayout layout, const char* weight_name,
                       InitRule weight_init);

// linear_problem with config num_groups after the extents, and the num_groups parameter (the group
// count changes with size, so kernels read it from kb_config).
Problem grouped_problem(const GroupedShape& shape, WeightLayout layout, const char* weight_name,
                        InitRule weight_init);

// Sets the FLOPs of the (M, K) @ (K, N) product (the epilogue is not counted) and min_bytes, once
// the problem's tensors are listed.
void finish_problem(Problem& problem, const Shape& shape);

// linear_problem with the three per-feature inputs of a group norm after the weight: `bias_name`
// (N) normal*0.1, gn_weight (N) normal*0.1 + 1 and gn_bias (N) normal*0.3 (not the spec's
// normal*0.02, ones and zeros, which would let a kernel skip the bias or the affine step: 40k's
// header has the measurements).
Problem group_norm_problem(const GroupedShape& shape, WeightLayout layout, const char* weight_name,
                           const char* bias_name);

// The epsilon of nn.GroupNorm, which every group_norm_problem's original keeps.
inline constexpr double kGroupNormEps = 1e-5;

// The group norm of a group_norm_problem's rows of N features as its baseline and bf16 program run
// it: groups of N/G, epsilon kGroupNormEps, then the affine step with gn_weight (in[3]) and gn_bias
// (in[4]), held as f32. The bias in[2] is the caller's: each workload adds it at its own step.
class RowGroupNorm {
 public:
  RowGroupNorm(const GroupedShape& shape, const kb_tensor* in);

  // The baseline's one f32 pass over a row in place (ops::group_norm), adding `add` (N values, or
  // nullptr) first.
  void operator()(float* row, const float* add = nullptr) const;

  // The original's group norm on a row of bf16 values, op by op, each rounded (ops::jnp).
  void bf16(float* row) const;

 private:
  std::size_t n_, group_size_;
  ops::F32Buffer gn_weight_, gn_bias_;
};

// finish_problem for a workload whose one output is out bf16 (M, N), which it sets.
void finish_row_problem(Problem& problem, const Shape& shape);

// The extents of a call with `expected_inputs` inputs and one output whose inputs start with x bf16
// (M, K), weight bf16 in `layout` and `vectors` bf16 (N) vectors, or nullopt. Later inputs and the
// output are the caller's to check.
std::optional<Shape> leading_inputs(const kb_tensor* in, std::int32_t num_inputs,
                                    std::int32_t num_outputs, std::int32_t expected_inputs,
                                    WeightLayout layout, int vectors);

// The extents of a call whose inputs are x, weight and `vectors` bf16 (N) vectors (see
// leading_inputs) and whose one output is a float (M, N) (bf16 in the timed run, f32 in the
// oracle), or nullopt.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs,
                                   WeightLayout layout, int vectors);

// `shape` with the call's "num_groups" parameter when it is positive and divides N, or nullopt.
std::optional<GroupedShape> with_groups(const kb_config* cfg, const std::optional<Shape>& shape);

// shape_of_call in checked_entry's form, for a workload whose signature is exactly that.
template <WeightLayout kLayout, int kVectors>
std::optional<Shape> plain_call(const kb_tensor* in, std::int32_t num_inputs, const kb_tensor* out,
                                std::int32_t num_outputs) {
  return shape_of_call(in, num_inputs, out, num_outputs, kLayout, kVectors);
}

// plain_call with the call's num_groups (see with_groups).
template <WeightLayout kLayout, int kVectors>
std::optional<GroupedShape> grouped_call(const kb_config* cfg, const kb_tensor* in,
                                         std::int32_t num_inputs, const kb_tensor* out,
                                         std::int32_t num_outputs) {
  return with_groups(cfg, shape_of_call(in, num_inputs, out, num_outputs, kLayout, kVectors));
}

// Element j of a bf16 tensor, widened to double.
inline double at(const kb_tensor& t, std::int64_t j) {
  return bf16_to_f32(static_cast<const bf16_t*>(t.data)[j]);
}

// y[j] = bias[j] (0 without one) + x[i, p] * W[p, j] summed in double for p ascending: row i of the
// references' linear layer. Every layout adds the same terms in the same order.
void reference_row(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                   const kb_tensor* bias, const Shape& shape, std::int64_t i, double* y);

// The double group norm of one row over groups of `group_size` (biased variance): calls
// each(j, (y[j] - mean) / sqrt(var + eps) * gamma[j] + beta[j]) for every feature in order.
template <class Each>
void group_norm_row(const double* y, std::int64_t n, std::int64_t group_size, double eps,
                    const kb_tensor& gamma, const kb_tensor& beta, Each each) {
  for (std::int64_t g = 0; g < n; g += group_size) {
    double mean = 0, var = 0;
    for (std::int64_t j = g; j < g + group_size; ++j) mean += y[j];
    mean /= static_cast<double>(group_size);
    for (std::int64_t j = g; j < g + group_size; ++j) var += (y[j] - mean) * (y[j] - mean);
    var /= static_cast<double>(group_size);
    for (std::int64_t j = g; j < g + group_size; ++j)
      each(j, (y[j] - mean) / std::sqrt(var + eps) * at(gamma, j) + at(beta, j));
  }
}

// The double softmax of the n logits (overwritten with their exponentials), stored as f32 in out.
void softmax_row(double* logits, std::int64_t n, float* out);

// The reference of a workload whose row pass ends in a softmax (38k, 43k, 50k): for each row i, the
// linear row with the bias in[2] (reference_row), logits(row, N) in place, then softmax_row into
// row i of out.
template <class Logits>
void softmax_reference(const Shape& shape, WeightLayout layout, const kb_tensor* in, kb_tensor& out,
                       Logits logits) {
  auto* y = static_cast<float*>(out.data);
  std::vector<double> row(static_cast<std::size_t>(shape.n));
  for (std::int64_t i = 0; i < shape.m; ++i) {
    reference_row(in[0], in[1], layout, &in[2], shape, i, row.data());
    logits(row.data(), shape.n);
    softmax_row(row.data(), shape.n, y + i * shape.n);
  }
}

// x @ weight with `epilogue` fused, into an f32 (M, N) scratch: the baselines' GEMM.
ops::ScratchMatrix gemm_f32(const kb_tensor* in, const Shape& shape, WeightLayout layout,
                            const ops::Epilogue& epilogue = {});

// For each row of y, in parallel while it is in cache: finish(row, N) in place, then the row
// stored once as that row of out.
template <class Finish>
void finish_rows(ops::ScratchMatrix& y, const Shape& shape, kb_tensor& out, Finish finish) {
  const auto cols = static_cast<std::size_t>(shape.n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < shape.m; ++i) {
    auto* row = static_cast<float*>(y.row(i));
    finish(row, cols);
    ops::store_row(row, cols, out, static_cast<std::size_t>(i) * cols);
  }
}

// The baseline of a workload that is softmax(activation(x @ weight + bias)) over each row (38k,
// 50k), as a fusing compiler emits it: one GEMM with the bias in[2] and `activation` fused into its
// epilogue, into f32 logits, then one softmax pass per row while the row is in cache, storing the
// output once (bf16 in the timed run, f32 in the oracle).
void softmax_baseline(const kb_tensor* in, const Shape& shape, WeightLayout layout,
                      ops::Activation activation, kb_tensor& out);

// The JAX matmul's bf16 result x @ weight, (M, N).
ops::ScratchMatrix gemm_bf16(const kb_tensor* in, const Shape& shape, WeightLayout layout);

// The bf16 programs' rows: for each row of the bf16 product, in order, finish(product_row, row, N)
// fills the f32 row, which is then stored as that row of out.
template <class Finish>
void bf16_rows(ops::ScratchMatrix& product, const Shape& shape, kb_tensor& out, Finish finish) {
  const auto cols = static_cast<std::size_t>(shape.n);
  std::vector<float> row(cols);
  for (std::int64_t i = 0; i < shape.m; ++i) {
    finish(static_cast<const bf16_t*>(product.row(i)), row.data(), cols);
    ops::store_row(row.data(), cols, out, static_cast<std::size_t>(i) * cols);
  }
}

// bf16_rows for a workload whose row pass ends in a softmax: logits(product_row, row, N) fills the
// row with the bf16 logits, then jax.nn.softmax runs on it op by op in bf16.
template <class Logits>
void bf16_softmax_rows(ops::ScratchMatrix& product, const Shape& shape, kb_tensor& out,
                       Logits logits) {
  bf16_rows(product, shape, out, [&](const bf16_t* y, float* row, std::size_t cols) {
    logits(y, row, cols);
    ops::jnp::softmax(row, cols);
  });
}

// The bf16 program of a workload that is softmax(activation(x @ weight + bias)) over each row
// (38k, 50k), the original on bf16 tensors: the matmul's bf16 result, the bias in[2] added and
// rounded, activation(v) (its bf16 ops on that value), then jax.nn.softmax op by op in bf16.
template <class Activation>
void bf16_softmax_program(const kb_tensor* in, const Shape& shape, WeightLayout layout,
                          kb_tensor& out, Activation activation) {
  ops::ScratchMatrix product = gemm_bf16(in, shape, layout);
  const auto* bias = static_cast<const bf16_t*>(in[2].data);
  bf16_softmax_rows(product, shape, out, [&](const bf16_t* y, float* row, std::size_t cols) {
    for (std::size_t j = 0; j < cols; ++j)
      row[j] = activation(ops::jnp::r(bf16_to_f32(y[j]) + bf16_to_f32(bias[j])));
  });
}

}  // namespace kbench::gemm_rows
