// The linear layer y = x @ W (+ b) that the KernelBench level-2 linear workloads start with (19k,
// 20k, 21k, 23k, 24k, 26k, 27k, 30k, 32k, 35k, 36k, 37k, 42k, 44k, 47k, 48k, 49k): its tensor
// checks, its double-precision reference, its bf16 emulation (the JAX program's bf16 matmul result,
// then a bf16 bias add), the baselines' GEMM calls and the output stores. The workloads that are
// the layer plus an elementwise epilogue get their reference and bf16 program whole from here.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/bf16.h"
#include "kbench/kernel.h"
#include "ops/gemm.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"

namespace kbench::linear {

// How the weight is laid out: (K, N) for `x @ W`, (N, K) for `x @ W.T` (nn.Linear's layout).
enum class WeightLayout { kInOut, kOutIn };

struct Shape {
  std::int64_t m = 0, k = 0, n = 0;  // rows of x, in features, out features
};

// The extent of an input after x and weight: one value per output column (N,), or one (1,).
enum class Extent { kColumns, kScalar };

// The extents of the one output: per element (M, N), per row (M, 1), or per row flat (M).
enum class Out { kMN, kM1, kM };

// A call x (in[0]) @ weight (in[1]), then one bf16 vector per entry of `vectors` (in[2], ...),
// into one float output (bf16 or f32).
struct Call {
  WeightLayout layout = WeightLayout::kInOut;
  std::span<const Extent> vectors;
  Out output = Out::kMN;

  // The call's extents when its tensors match; nullopt otherwise.
  std::optional<Shape> shape_of(const kb_tensor* in, std::int32_t num_inputs, const kb_tensor* out,
                                std::int32_t num_outputs) const;
};

// The vectors of a call whose one vector is a bias (N); the most common call: x (M, K), weight
// (K, N), then a bias (N), out (M, N).
inline constexpr Extent kBiasOnly[] = {Extent::kColumns};
inline constexpr Call kBiasCall{.vectors = kBiasOnly};

// The extents of x (M, K) @ weight (+ bias (N)) when x and weight are rank-2 bf16 tensors whose
// extents agree under `layout` and bias (when given) is a bf16 (N); nullopt otherwise.
std::optional<Shape> shape_of(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                              const kb_tensor* bias);

// Call::shape_of as checked_entry's kShapeOf (entry.h), for workloads whose call is a Call.
template <const Call& kCall>
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  return kCall.shape_of(in, num_inputs, out, num_outputs);
}

// ---- The problem ----

// The sizes of the workloads whose original runs at (M, K, N) = (4096, 8192, 8192): cpu keeps the
// original's K = N = 2 M.
inline constexpr Presets<Shape> kPresets = {
    .smoke = {29, 53, 47},  // no extent a multiple of 8 or 16: exercises every tile edge
    .cpu = {768, 1536, 1536},
    .full = {4096, 8192, 8192},
};

// The config keys of K and N: most originals say in_features and out_features, some input_size
// and hidden_size or output_size.
struct ConfigKeys {
  const char* in = "in_features";
  const char* out = "out_features";
};

// The original's config: batch_size, keys.in and keys.out, then the workload's `extras` (the
// spec's config_full order).
std::vector<ConfigEntry> layer_config(const Shape& shape, std::vector<ConfigEntry> extras = {},
                                      ConfigKeys keys = {});

// The layer's inputs as KernelBench draws them, where a workload keeps them: the non-degeneracy
// changes replace one rule here.
struct Inits {
  InitRule x = InitRule::uniform(0.0, 1.0);
  InitRule weight = InitRule::normal(0.02);
  const char* bias = "bias";  // the bias's name; nullptr for a layer without one
  InitRule bias_init = InitRule::normal(0.02);
};

// x (M, K), weight ((K, N) or (N, K) by `layout`) and bias (N), all bf16, then `extras`.
std::vector<InputSpec> layer_inputs(const Shape& shape, WeightLayout layout,
                                    const Inits& inits = {}, std::vector<InputSpec> extras = {});

// A problem whose FLOPs are the (M, K) @ (K, N) product alone, with one bf16 output `out`.
Problem problem(const Shape& shape, std::vector<ConfigEntry> config, std::vector<InputSpec> inputs,
                std::vector<std::int64_t> out_shape);

// The problem of a kBiasCall layer: layer_config(shape, extras, keys), x, weight (K, N) and bias as
// layer_inputs draws them (by `inits`), out (M, N).
Problem bias_layer_problem(const Shape& shape, std::vector<ConfigEntry> extras = {},
                           ConfigKeys keys = {}, const Inits& inits = {});

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

// The baselines' single GEMM: c = epilogue(x @ W) with the bias (when given) fused as the
// epilogue's bias, so that the product is rounded once, into c's dtype.
void gemm(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout, const kb_tensor* bias,
          const ops::MutableMatrix& c, ops::Epilogue epilogue = {});

// The same GEMM into f32 scratch (M, N), for baselines whose row passes follow it.
ops::ScratchMatrix f32_gemm(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                            const kb_tensor* bias, ops::Epilogue epilogue = {});

// Element i of a bf16 or f32 tensor := v (rounded to nearest even for bf16).
void store(kb_tensor& t, std::int64_t i, float v);

// A bf16 tensor's value: round to nearest even, as every op on a bf16 tensor does.
inline float bf16r(float v) {
  return round_to_bf16(v);
}

// ---- Epilogues and row reductions written alike in several workloads ----

// jax.nn.gelu's default tanh form, 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), in double.
inline double gelu_tanh(double v) {
  return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
}

// out[i] = finish(sum_j term(y[i, j])): the sum in T from zero, j in order, stored in out's dtype.
// The references (T double, out f32) and the bf16 programs (T float) of the row-sum workloads.
template <class T, class Term, class Finish>
void row_sums(const std::vector<T>& y, const Shape& shape, kb_tensor& out, Term term,
              Finish finish) {
  for (std::int64_t i = 0; i < shape.m; ++i) {
    T total = 0;
    for (std::int64_t j = 0; j < shape.n; ++j)
      total += term(y[static_cast<std::size_t>(i * shape.n + j)]);
    store(out, i, static_cast<float>(finish(total)));
  }
}

// out[i] = reduce(row i of y, its length), rows in parallel: the baselines' one loop fusion per
// row after an f32 GEMM. `reduce` may overwrite the row.
template <class Reduce>
void reduce_rows(ops::ScratchMatrix& y, kb_tensor& out, Reduce reduce) {
  const ops::Matrix extents = y.in();
  const auto len = static_cast<std::size_t>(extents.cols);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < extents.rows; ++i)
    store(out, i, reduce(static_cast<float*>(y.row(i)), len));
}

// max + log(sum_j exp(row[j] - max)) in double, for the row's maximum `max`.
inline double logsumexp(const double* row, std::int64_t n, double max) {
  double total = 0;
  for (std::int64_t j = 0; j < n; ++j) total += std::exp(row[j] - max);
  return max + std::log(total);
}

// jax.nn.logsumexp of a bf16 row whose maximum is `max`: exp(v - max) in bf16 ops, an
// f32-accumulated sum rounded to bf16, log (bf16), + max (bf16).
inline float logsumexp_bf16(const float* row, std::int64_t n, float max) {
  float total = 0;
  for (std::int64_t j = 0; j < n; ++j)
    total += round_to_bf16(std::exp(round_to_bf16(row[j] - max)));
  return round_to_bf16(round_to_bf16(std::log(round_to_bf16(total))) + max);
}

// ---- The layer plus an elementwise epilogue (Out::kMN) ----

// The inputs after weight, widened: vectors[i][j] is input 2 + i at column j (index 0 for a
// scalar input).
template <class T>
using Vectors = std::vector<std::vector<T>>;

using ReferenceEpilogue = double (*)(double y, std::int64_t j, const Vectors<double>& v);
using ProgramEpilogue = float (*)(float y, std::int64_t j, const Vectors<float>& v);

// The truth: y = x @ weight summed in double, then out[i, j] = epilogue(y[i, j], j, vectors) in
// double, stored as f32. Returns nonzero unless the call matches and out is f32.
int epilogue_reference(const Call& call, ReferenceEpilogue epilogue, const kb_tensor* in,
                       std::int32_t num_inputs, kb_tensor* out, std::int32_t num_outputs);

// The original program's arithmetic: y = bf16(x @ weight) (a JAX matmul of bf16 operands holds a
// bf16 result), then out[i, j] = program_ops(y[i, j], j, vectors), where program_ops rounds with
// bf16r after every op the program holds in bf16; stored in out's dtype.
int epilogue_program(const Call& call, ProgramEpilogue program_ops, const kb_tensor* in,
                     std::int32_t num_inputs, kb_tensor* out, std::int32_t num_outputs);

// The two above as a Workload's entry points.
template <const Call& kCall, ReferenceEpilogue kEpilogue>
int epilogue_reference(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                       kb_tensor* out, std::int32_t num_outputs) {
  return epilogue_reference(kCall, kEpilogue, in, num_inputs, out, num_outputs);
}

template <const Call& kCall, ProgramEpilogue kOps>
int epilogue_program(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs,
                     kb_tensor* out, std::int32_t num_outputs) {
  return epilogue_program(kCall, kOps, in, num_inputs, out, num_outputs);
}

// The programs (kit/entry.h's with_programs) of a workload that is one linear layer with an
// elementwise epilogue: the two above, and the workload's own baseline.
template <const Call& kCall, ReferenceEpilogue kEpilogue, KernelFn kBaseline, ProgramEpilogue kOps>
struct EpiloguePrograms {
  static constexpr KernelFn reference = epilogue_reference<kCall, kEpilogue>;
  static constexpr KernelFn baseline = kBaseline;
  static constexpr KernelFn bf16_program = epilogue_program<kCall, kOps>;
};

// The fusing compiler's baseline of such a workload: one GEMM with `epilogue` and the bias in[2]
// (call.vectors[0] must be the bias) fused, written once in out's dtype. Returns nonzero unless
// the call matches.
int fused_baseline(const Call& call, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
                   std::int32_t num_outputs, ops::Epilogue epilogue);

}  // namespace kbench::linear
