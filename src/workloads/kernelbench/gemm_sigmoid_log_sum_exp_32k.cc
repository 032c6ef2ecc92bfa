// 32k_Gemm_Sigmoid_LogSumExp: KernelBench level 2 problem 45 (PyTorch, translated to JAX): a
// linear layer, a sigmoid, a second linear layer and a log-sum-exp over its features.
//
// Operator  h = sigmoid(x @ w1.T + b1);  z = h @ w2.T + b2;  out = logsumexp over features of z.
// Inputs    x   bf16 (M, K)   uniform[-1,1)                M = batch_size, K = input_size
//           w1  bf16 (H, K)   normal*1.5 sqrt(3/K) + sqrt(3/K)  H = hidden_size (nn.Linear layout)
//           b1  bf16 (H)      normal(0,1)
//           w2  bf16 (O, H)   normal*4/sqrt(H) + 5/H        O = output_size
//           b2  bf16 (O)      normal(0,1)
//           (the original: x uniform[0,1), the rest normal*0.02; see Deviations)
// Output    out bf16 (M)
// FLOPs     2*(M*K*H + M*H*O) (derived); 412,316,860,416 at full size (M=16384, K=2048, H=4096,
//           O=1024).
// Character two compute-bound GEMMs; the (M, H) hidden activation is written and read once, the
//           (M, O) logits are reduced per row.
// Deviations
//   - Non-degeneracy: x ~ uniform[-1,1) (was [0,1)), w1 ~ normal(mean sqrt(3/K), std 0.02) and
//     w2 ~ normal(mean 5/H, std 0.02) (both were normal*0.02). With the original's i.i.d.
//     zero-mean weights every row of h is a near-constant ~0.5 vector plus small noise and every
//     row's log-sum-exp over O features is ~log O plus a row-independent offset: per-row
//     contrast ~0.2%, so the oracle's mean passes rel-L2 1e-2. As in 36k, w1's shared mean
//     shifts row i of x @ w1.T by sqrt(3/K) * sum_k x[i,k] (standard deviation 1, centred by the
//     signed x), so sum_j h[i,j] spreads over ~0.25-0.75 H; w2's shared mean 5/H turns that into
//     a row shift of z with standard deviation ~1 (and a common offset of ~2.5).
//   - With those means and std 0.02 the shared means were the whole signal: an output computed
//     with w1 at its mean, which needs no GEMM (x @ w1.T is then sqrt(3/K) times x's row sums),
//     passed the rule (0.35 of the bound at the worst of 10 smoke seeds, 0.64 of 2 cpu seeds), as
//     did ones without b1, b2 or (at smoke) w2's random part. So the weights' random parts are as
//     large as their means' effect: w1 std 1.5 sqrt(3/K) (x @ w1.T's random part of std 1.5
//     against the row shift of std 1), w2 std 4/sqrt(H) (z's random part of std ~1), and b1, b2
//     normal(0, 1). Now those outputs fail by 10x (w1), 21x (w2), 6.9x (b1) and 5.6x (b2) at
//     smoke, 7.5x or more at cpu size (suite_test, docs/workloads.md).
//   - The cpu preset is (M, K, H, O) = (2048, 512, 1024, 256): K:H:O = 2:4:1 as in the original,
//     M = 2 H rather than 4 H (one core's budget: 3.2 GFLOP).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/rows.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr linear::WeightLayout kLayout = linear::WeightLayout::kOutIn;

struct Shape {
  std::int64_t m, k, h, o;  // batch_size, input_size, hidden_size, output_size
};

constexpr Presets<Shape> kPresets = {
    .smoke = {29, 53, 67, 23},  // no extent a multiple of 8 or 16: exercises every tile edge
    .cpu = {2048, 512, 1024, 256},
    .full = {16384, 2048, 4096, 1024},
};

Problem make_problem(Size size) {
  const auto [m, k, h, o] = kPresets.at(size);
  Problem problem;
  problem.config = {{"batch_size", m}, {"input_size", k}, {"hidden_size", h}, {"output_size", o}};
  problem.inputs = {
      {{"x", KB_BF16, {m, k}}, InitRule::uniform(-1.0, 1.0)},
      {{"w1", KB_BF16, {h, k}},
       InitRule::normal(1.5 * std::sqrt(3.0 / static_cast<double>(k)),
                        std::sqrt(3.0 / static_cast<double>(k)))},
      {{"b1", KB_BF16, {h}}, InitRule::normal(1.0)},
      {{"w2", KB_BF16, {o, h}},
       InitRule::normal(4.0 / std::sqrt(static_cast<double>(h)), 5.0 / static_cast<double>(h))},
      {{"b2", KB_BF16, {o}}, InitRule::normal(1.0)},
  };
  problem.outputs = {{"out", KB_BF16, {m}}};
  const auto md = static_cast<double>(m), kd = static_cast<double>(k);
  const auto hd = static_cast<double>(h), od = static_cast<double>(o);
  problem.flops = 2.0 * (md * kd * hd + md * hd * od);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 5 || num_outputs != 1) return std::nullopt;
  const auto first = linear::shape_of(in[0], in[1], kLayout, &in[2]);
  if (!first || in[3].rank != 2 || in[3].shape[1] != first->n) return std::nullopt;
  const Shape shape{first->m, first->k, first->n, in[3].shape[0]};
  if (!ops::matches(in[3], KB_BF16, {shape.o, shape.h}) ||
      !ops::matches(in[4], KB_BF16, {shape.o}) || !ops::is_float_output(out[0], {shape.m}))
    return std::nullopt;
  return shape;
}

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, h, o] = shape;
  std::vector<double> hidden = linear::reference(in[0], in[1], kLayout, &in[2]);
  for (double& v : hidden) v = 1.0 / (1.0 + std::exp(-v));
  const auto* w2 = static_cast<const bf16_t*>(in[3].data);
  const auto* b2 = static_cast<const bf16_t*>(in[4].data);
  std::vector<double> z(static_cast<std::size_t>(o));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < o; ++j) {
      double dot = bf16_to_f32(b2[j]);
      for (std::int64_t p = 0; p < h; ++p) dot += hidden[i * h + p] * bf16_to_f32(w2[j * h + p]);
      z[j] = dot;
    }
    const double max = *std::max_element(z.begin(), z.end());
    static_cast<float*>(out[0].data)[i] = static_cast<float>(linear::logsumexp(z.data(), o, max));
  }
  return 0;
}

// What a fusing compiler emits: the first GEMM with b1 and the sigmoid fused into its epilogue,
// writing the hidden activation as the program holds it, in bf16 (not rounded in the oracle); the
// second GEMM with b2 fused, into f32; one log-sum-exp per row. Where the second GEMM's path widens
// bf16 to f32 anyway, h is rounded to bf16 but kept in f32, so it is not widened twice.
int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, h, o] = shape;
  const ops::F32Buffer b2 = ops::load_f32(in[4]);
  const ops::Epilogue second{.bias = b2.data()};
  const bool rounded = out[0].dtype == KB_BF16;
  const bool widened = !rounded || !ops::gemm_reads_bf16(m, o, h, /*b_transposed=*/true, second);
  ops::ScratchMatrix hidden(widened ? KB_F32 : KB_BF16, m, h);
  linear::gemm(in[0], in[1], kLayout, &in[2], hidden.out(),
               {.activation = ops::Activation::kSigmoid, .round_to_bf16 = rounded && widened});
  ops::ScratchMatrix z(KB_F32, m, o);
  ops::gemm(hidden.in(), ops::matrix_of(in[3]), /*b_transposed=*/true, z.out(), second);
  linear::reduce_rows(z, out[0],
                      [](const float* row, std::size_t n) { return ops::logsumexp(row, n); });
  return 0;
}

// The JAX program on bf16 tensors: x @ w1.T (bf16), + b1 (bf16), sigmoid (bf16), @ w2.T (bf16),
// + b2 (bf16), then jax.nn.logsumexp: max, exp(z - max) (bf16 ops), an f32-accumulated sum
// rounded to bf16, log (bf16) and + max (bf16).
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, h, o] = shape;
  const std::vector<float> pre = linear::bf16_program(in[0], in[1], kLayout, &in[2]);
  ops::ScratchMatrix hidden(KB_BF16, m, h);
  auto* hidden_values = static_cast<bf16_t*>(hidden.row(0));
  for (std::size_t i = 0; i < pre.size(); ++i)
    hidden_values[i] = f32_to_bf16(1.0f / (1.0f + std::exp(-pre[i])));
  kb_tensor hidden_tensor{hidden_values, KB_BF16, 2, {m, h}};
  const std::vector<float> z = linear::bf16_program(hidden_tensor, in[3], kLayout, &in[4]);
  for (std::int64_t i = 0; i < m; ++i) {
    const float* row = z.data() + i * o;
    const float max = *std::max_element(row, row + o);
    linear::store(out[0], i, linear::logsumexp_bf16(row, o, max));
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemmSigmoidLogSumExp32k = with_programs<Programs>({
    .name = "32k_Gemm_Sigmoid_LogSumExp",
    .kernelbench_problem = 45,
    .summary = "logsumexp(sigmoid(x @ w1.T + b1) @ w2.T + b2) per row: two bf16 GEMMs -> (M)",
    .problem = make_problem,
    .scaffold = scaffolds::k32k_Gemm_Sigmoid_LogSumExp,
});

}  // namespace kbench
