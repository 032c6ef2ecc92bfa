// 24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish: KernelBench level 2 problem 22 (PyTorch,
// translated to JAX): a linear layer, a scaling, a residual add of the tensor to itself, a clamp,
// a log-sum-exp over the features and a Mish-weighted product.
//
// Operator  v = clip(2 (x @ weight.T + bias) + 2 (x @ weight.T + bias), -10, 10)  (scale 2, x+x)
//           t = logsumexp over features of v, keepdims  -> (M, 1)
//           out = t * mish(t),  mish(t) = t * tanh(softplus(t)),  softplus(t) = log(1 + e^t)
// Inputs    x       bf16 (M, K)  uniform[-1,1)                  M = batch_size, K = input_size
//           weight  bf16 (N, K)  normal*0.02 + 0.5 sqrt(3/K)     N = hidden_size (nn.Linear layout)
//           bias    bf16 (N)     normal*0.25  (spec: normal*0.02; see Deviations)
// Output    out     bf16 (M, 1)
// Params    scale_factor 2, clamp_min -10, clamp_max 10: constants of the program.
// FLOPs     2*M*K*N (derived); 549,755,813,888 at full size (M=4096, K=8192, N=8192).
// Character compute-bound GEMM reduced per row by a log-sum-exp the fused kernel need not store.
// Tolerance rtol 2.5e-2 (atol and rel-L2 stay 1e-2). out = t * mish(t) ~ t^2 doubles the relative
//           error of t, which the faithful program rounds to bf16 three times (log, + max, then
//           softplus / tanh / two products): measured worst |diff| - atol = 1.25% (smoke, 20
//           seeds) and 1.29% (cpu, 3 seeds) of |oracle|, against the default rtol 1e-2. 2.5e-2
//           keeps 2x margin; wrong outputs are still rejected by rel-L2 1e-2 (closest degenerate:
//           oracle + 5% noise, rel-L2 0.049).
// Deviations
//   - Non-degeneracy: x ~ uniform[-1,1) instead of [0,1), and weight ~ normal(mean 0.5 sqrt(3/K),
//     std 0.02) instead of normal*0.02. With the original's inputs a row's log-sum-exp over N
//     features is ~log N + var/2 for every row alike (the column offsets that dominate it are
//     shared by all rows): the oracle's mean came within 1.1% (smoke) and 2.2% (cpu) rel-L2 of
//     the oracle, against the bound of 1e-2. The weight's shared mean gives row i a common
//     shift 4 * 0.5 sqrt(3/K) * sum_k x[i,k] of standard deviation 2 in the log-sum-exp's
//     argument (signed x centres it on 0), so t spreads by ~2 around log N + var/2.
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - bias normal*0.25 instead of normal*0.02: the log-sum-exp over N features averages a small
//     bias away, and an output computed without it (at 0) stayed inside the rule (0.34 of its bound
//     at the worst of 10 smoke seeds, 0.46 of 2 cpu seeds); now 8.2 and 12.7 (suite_test,
//     docs/workloads.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/jnp_bf16.h"
#include "ops/rows.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr linear::WeightLayout kLayout = linear::WeightLayout::kOutIn;
constexpr linear::Call kCall{
    .layout = kLayout, .vectors = linear::kBiasOnly, .output = linear::Out::kM1};
constexpr float kScaleFactor = 2.0f;
constexpr float kClampMin = -10.0f;
constexpr float kClampMax = 10.0f;

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  return linear::problem(
      shape,
      linear::layer_config(shape,
                           {{"scale_factor", double{kScaleFactor}},
                            {"clamp_min", double{kClampMin}},
                            {"clamp_max", double{kClampMax}}},
                           {.in = "input_size", .out = "hidden_size"}),
      linear::layer_inputs(
          shape, kLayout,
          {.x = InitRule::uniform(-1.0, 1.0),
           .weight = InitRule::normal(0.02, 0.5 * std::sqrt(3.0 / static_cast<double>(shape.k))),
           .bias_init = InitRule::normal(0.25)}),
      {shape.m, 1});
}

double mish_product(double t) {
  return t * t * std::tanh(std::log1p(std::exp(t)));
}

int reference(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  std::vector<double> y = linear::reference(in[0], in[1], kLayout, &in[2]);
  for (std::int64_t i = 0; i < m; ++i) {
    double* row = y.data() + i * n;
    double max = -INFINITY;
    for (std::int64_t j = 0; j < n; ++j) {
      const double scaled = row[j] * kScaleFactor;
      row[j] = std::clamp(scaled + scaled, double{kClampMin}, double{kClampMax});
      max = std::max(max, row[j]);
    }
    static_cast<float*>(out[0].data)[i] =
        static_cast<float>(mish_product(linear::logsumexp(row, n, max)));
  }
  return 0;
}

// What a fusing compiler emits: the GEMM with the scaling and the residual add folded into its
// epilogue (alpha = 4 and bias 4b: powers of two, so 4 * (AB + b) rounds exactly as AB + b does),
// into f32, then one loop fusion per row: clamp, log-sum-exp, and the scalar Mish product. Only the
// (M, 1) result is rounded to the output dtype.
int baseline(const linear::Shape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  constexpr float kFactor = 2.0f * kScaleFactor;  // (y * 2) + (y * 2)
  ops::F32Buffer bias = ops::load_f32(in[2]);
  for (std::size_t j = 0; j < bias.size(); ++j) bias.data()[j] *= kFactor;
  ops::ScratchMatrix y =
      linear::f32_gemm(in[0], in[1], kLayout, nullptr, {.alpha = kFactor, .bias = bias.data()});
  linear::reduce_rows(y, out[0], [](float* row, std::size_t n) {
    ops::clamp_inplace(row, n, kClampMin, kClampMax);
    const float t = ops::logsumexp(row, n);
    return t * (t * std::tanh(std::log1p(std::exp(t))));
  });
  return 0;
}

// The JAX program on bf16 tensors, every op rounding to bf16: x @ weight.T, + bias, * 2, x + x
// (both exact), clip; logsumexp as jax.nn.logsumexp computes it (max, exp(v - max), an f32-
// accumulated sum, log, + max); then softplus, tanh, t * tanh (mish) and t * mish.
int bf16_program(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  std::vector<float> y = linear::bf16_program(in[0], in[1], kLayout, &in[2]);
  for (std::int64_t i = 0; i < m; ++i) {
    float* row = y.data() + i * n;
    float max = -INFINITY;
    for (std::int64_t j = 0; j < n; ++j) {
      const float scaled = round_to_bf16(row[j] * kScaleFactor);
      row[j] = std::clamp(round_to_bf16(scaled + scaled), kClampMin, kClampMax);
      max = std::max(max, row[j]);
    }
    const float t = linear::logsumexp_bf16(row, n, max);
    const float softplus = ops::jnp::softplus(t);
    const float mish = round_to_bf16(t * round_to_bf16(std::tanh(softplus)));
    linear::store(out[0], i, round_to_bf16(t * mish));
  }
  return 0;
}

using Programs = CheckedPrograms<linear::shape_of_call<kCall>, reference, baseline, bf16_program>;

}  // namespace

const Workload kMatmulScaleResidualAddClampLogSumExpMish24k = with_programs<Programs>({
    .name = "24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish",
    .kernelbench_problem = 22,
    .summary = "t = logsumexp(clip(4 (x @ weight.T + bias), -10, 10)), out = t * mish(t) -> (M,1)",
    .problem = make_problem,
    // rtol 2.5e-2: see the header's Tolerance note.
    .tolerance = {.atol = 1e-2, .rtol = 2.5e-2, .max_rel_l2 = 1e-2},
    .scaffold = scaffolds::k24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish,
});

}  // namespace kbench
