// 49k_Matmul_AvgPool_GELU_Scale_Max: KernelBench level 2 problem 98 (PyTorch, translated to JAX):
// a linear layer, an average pool over the features, a GELU, a scaling and a max over the pooled
// features.
//
// Operator  v = x @ weight + bias;  p = AvgPool1d(v, kernel 16, stride 16) over the features
//           (lax.reduce_window sum / 16) -> (M, N/16);  out = max_q (2 * gelu(p[:, q])),
//           gelu(u) = 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))) (jax.nn.gelu's default).
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features (a multiple of 16)
//           bias    bf16 (N)     normal*0.1  (spec: normal*0.02; see Deviations)
// Output    out     bf16 (M)
// Params    pool_kernel_size 16, scale_factor 2: constants of the program.
// FLOPs     2*M*K*N (derived); 549,755,813,888 at full size (M=4096, K=8192, N=8192).
// Character compute-bound GEMM reduced per row; the pool can be folded into the weight (pool W's
//           columns first: a 16x smaller GEMM, the spec's caveat), which kbench leaves to
//           candidates: the baseline computes what the program says.
// Numerics  jax.nn.gelu runs op by op on bf16 with bf16 constants, as XLA:CPU compiles it (a
//           rounding after each of its primitives; see 42k).
// Tolerance rtol 3e-2, rel-L2 2e-2 (atol stays 1e-2). reduce_window sums each window in the
//           operand's dtype: the faithful program rounds each of its 16 partial sums to bf16 (on
//           top of the product, the bias add, the mean, the GELU and the scaling). Measured worst
//           rel-L2: 0.0082 (smoke, 20 seeds), 0.0059 (cpu, 3 seeds), 0.0054 (full, 1 seed); the
//           rtol needed at atol 1e-2: 0 (smoke and cpu, outputs under ~0.7) and 1.5% (full,
//           outputs ~1-2). The bounds keep ~2x margin; the closest degenerate (oracle + 5%
//           noise, rel-L2 0.049) is still rejected 2.5x.
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`. The cpu preset is
//     (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original (96 pooled features); smoke
//     has N = 48 (3 windows), since N must be a multiple of the window.
//   - bias normal*0.1 instead of normal*0.02: an output computed without it (at 0) came to 0.91
//     (smoke) and 0.93 (cpu): inside the rule of the rule's bound at its worst over 10 smoke and 2
//     cpu seeds, too close for the rule to be sure to notice a kernel that drops it; now 5.9 and
//     4.6 (suite_test, docs/workloads.md).
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
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr linear::WeightLayout kLayout = linear::WeightLayout::kInOut;
constexpr linear::Call kCall{
    .layout = kLayout, .vectors = linear::kBiasOnly, .output = linear::Out::kM};
constexpr std::int64_t kPool = 16;
constexpr float kScaleFactor = 2.0f;

constexpr Presets<linear::Shape> kPresets = {
    .smoke = {29, 211, 112},  // M, K odd (K prime); N = 7 windows of 16
    .cpu = {768, 1536, 1536},
    .full = {4096, 8192, 8192},
};

Problem make_problem(Size size) {
  const linear::Shape& shape = kPresets.at(size);
  return linear::problem(
      shape,
      linear::layer_config(shape,
                           {{"pool_kernel_size", kPool}, {"scale_factor", double{kScaleFactor}}}),
      linear::layer_inputs(shape, kLayout, {.bias_init = InitRule::normal(0.1)}), {shape.m});
}

std::optional<linear::Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                           const kb_tensor* out, std::int32_t num_outputs) {
  const auto shape = kCall.shape_of(in, num_inputs, out, num_outputs);
  if (!shape || shape->n % kPool != 0) return std::nullopt;
  return shape;
}

int reference(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  const std::vector<double> v = linear::reference(in[0], in[1], kLayout, &in[2]);
  const double scale = std::sqrt(2.0 / M_PI);
  for (std::int64_t i = 0; i < m; ++i) {
    double best = -INFINITY;
    for (std::int64_t q = 0; q < n / kPool; ++q) {
      double window = 0;
      for (std::int64_t j = q * kPool; j < (q + 1) * kPool; ++j) window += v[i * n + j];
      const double u = window / kPool;
      best = std::max(
          best, kScaleFactor * 0.5 * u * (1.0 + std::tanh(scale * (u + 0.044715 * u * u * u))));
    }
    static_cast<float*>(out[0].data)[i] = static_cast<float>(best);
  }
  return 0;
}

// What a fusing compiler emits: the GEMM with the bias fused into its epilogue, into f32, then one
// loop fusion per row: the window means, a vectorized GELU over them, and the maximum (times 2,
// exact, after the max). Only the (M) result is rounded to the output dtype.
int baseline(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  ops::ScratchMatrix v = linear::f32_gemm(in[0], in[1], kLayout, &in[2]);
  const std::int64_t windows = n / kPool;
  // Per row: its window means, then their GELUs (2 * windows floats, in L1).
  ops::F32Buffer pooled(static_cast<std::size_t>(2 * m * windows));
  const auto len = static_cast<std::size_t>(windows);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const auto* row = static_cast<const float*>(v.row(i));
    float* means = pooled.data() + 2 * i * windows;
    float* gelus = means + windows;
    for (std::int64_t q = 0; q < windows; ++q)
      means[q] = ops::sum(row + q * kPool, static_cast<std::size_t>(kPool)) / kPool;
    ops::gelu_tanh_shifted(means, 0.0f, gelus, len);
    linear::store(out[0], i, kScaleFactor * ops::max_value(gelus, len));
  }
  return 0;
}

// The JAX program on bf16 tensors: x @ weight (bf16), + bias (bf16), reduce_window's sum in the
// operand's dtype (each add rounds to bf16), / 16, gelu in bf16 ops, * 2, and the max.
int bf16_program(const linear::Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  const std::vector<float> v = linear::bf16_program(in[0], in[1], kLayout, &in[2]);
  for (std::int64_t i = 0; i < m; ++i) {
    float best = -INFINITY;
    for (std::int64_t q = 0; q < n / kPool; ++q) {
      float window = 0;
      for (std::int64_t j = q * kPool; j < (q + 1) * kPool; ++j)
        window = round_to_bf16(window + v[static_cast<std::size_t>(i * n + j)]);
      const float mean = round_to_bf16(window / kPool);
      best = std::max(best, round_to_bf16(kScaleFactor * ops::jnp::gelu_tanh(mean)));
    }
    linear::store(out[0], i, best);
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kMatmulAvgPoolGeluScaleMax49k = with_programs<Programs>({
    .name = "49k_Matmul_AvgPool_GELU_Scale_Max",
    .kernelbench_problem = 98,
    .summary = "max over 16-wide window means q of 2 gelu(q), v = x @ weight + bias -> (M)",
    .problem = make_problem,
    // rtol 3e-2 and rel-L2 2e-2: see the header's Tolerance note.
    .tolerance = {.atol = 1e-2, .rtol = 3e-2, .max_rel_l2 = 2e-2},
    .scaffold = scaffolds::k49k_Matmul_AvgPool_GELU_Scale_Max,
});

}  // namespace kbench
