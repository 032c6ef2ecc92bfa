// 43k_Gemm_BatchNorm_Scaling_Softmax: KernelBench level 2 problem 84 (PyTorch, translated to JAX):
// a linear layer, eval-mode batch norm with running statistics, a learned scalar scale, softmax
// over the features.
//
// Operator  y = x @ weight + bias; z = bn_scale * (y - bn_mean) / sqrt(bn_var + 1e-5) + bn_bias;
//           out = softmax(scale * z, axis=1).
// Inputs    x         bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight    bf16 (K, N)  normal*0.02    N = out_features (the translation's x @ weight)
//           bias      bf16 (N)     normal*0.05       (spec: normal*0.02; see Deviations)
//           bn_scale  bf16 (N)     normal*0.1 + 1    (spec: ones; see Deviations)
//           bn_bias   bf16 (N)     normal*0.05       (spec: normal*0.02; see Deviations)
//           bn_mean   bf16 (N)     normal*0.1        (spec: zeros; see Deviations)
//           bn_var    bf16 (N)     uniform[0.5,1.5)  (spec: ones; see Deviations)
//           scale     bf16 (1)     uniform[0.5,0.9)  (spec: ones; see Deviations)
// Params    bn_eps = 1e-5
// Output    out       bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue and softmax are not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM; the batch norm is a per-column affine map the row softmax pass
//           applies on the fly.
// Deviations
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original. The smoke
//     preset (29, 1531, 47) keeps that K: the logits' spread grows as sqrt(K), and at the K of the
//     other linear layers' smoke preset (53) it was ~0.1, so flat a softmax that outputs computed
//     without scale (at its mean) or bn_scale (at 1) passed the rule (0.45 and 0.70 of the bound
//     at the worst of 10 seeds).
//   - bn_momentum (config) is unused, as in the original.
//   - The spec's running statistics (mean 0, variance 1), bn_scale (ones) and scale (one) make the
//     batch norm and the scaling the identity up to eps: a kernel that ignored all four inputs
//     would pass. They are drawn near those values instead (bn_scale 1 + 0.1 normal, bn_mean
//     0.1 normal, bn_var uniform [0.5, 1.5), scale uniform [0.5, 0.9)), so each changes the
//     output well beyond the tolerance and must be computed. bias and bn_bias are normal*0.05,
//     not normal*0.02: without either (at 0) an output came to 1.0-1.6 of the bound at the worst
//     of 10 smoke and 2 cpu seeds, now 2.3 or more; scale's wider range takes a draw near its
//     mean (which hides it) less often (now 3.0 or more). The scale is drawn below one, not
//     above: a sharper softmax puts x - max where bf16's step is coarse, and at scale ~2 the bf16
//     program's rel-L2 reached 0.009 of the 0.01 bound at cpu size.
//   - Softmax values are ~1/N (1e-4 at full size, 7e-4 at cpu size), far below the elementwise
//     atol of 1e-2, so allclose accepts any output near zero (the spec's caveat); the rel-L2
//     bound is what rejects wrong outputs here.
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
#include "workloads/kit/gemm_rows.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using gemm_rows::Shape;
using gemm_rows::WeightLayout;

constexpr double kBnEps = 1e-5;      // config_full.bn_eps
constexpr double kBnMomentum = 0.1;  // config_full.bn_momentum (eval mode: unused)

constexpr WeightLayout kLayout = WeightLayout::kInOut;

// The batch norm's epsilon of a call: the "bn_eps" parameter.
double bn_eps_of(const kb_config* cfg) {
  return kb_param_or(cfg, "bn_eps", kBnEps);
}

// The smoke preset keeps the cpu preset's K: the logits' spread grows as sqrt(K), and at the shared
// smoke K (53) it was ~0.1, a softmax so flat that the rule could not see bn_scale or scale.
constexpr Presets<Shape> kPresets = {
    .smoke = {29, 1531, 47},  // no extent a multiple of 8 or 16: exercises every tile edge
    .cpu = linear::kPresets.cpu,
    .full = linear::kPresets.full,
};

Problem make_problem(Size size) {
  const Shape shape = kPresets.at(size);
  const auto [m, k, n] = shape;
  Problem problem = gemm_rows::linear_problem(shape, kLayout, "weight", InitRule::normal(0.02));
  problem.config.insert(problem.config.end(), {{"bn_eps", kBnEps}, {"bn_momentum", kBnMomentum}});
  problem.params = {{"bn_eps", kBnEps}};
  problem.inputs.insert(problem.inputs.end(),
                        {
                            {{"bias", KB_BF16, {n}}, InitRule::normal(0.05)},
                            {{"bn_scale", KB_BF16, {n}}, InitRule::normal(0.1, 1.0)},
                            {{"bn_bias", KB_BF16, {n}}, InitRule::normal(0.05)},
                            {{"bn_mean", KB_BF16, {n}}, InitRule::normal(0.1)},
                            {{"bn_var", KB_BF16, {n}}, InitRule::uniform(0.5, 1.5)},
                            {{"scale", KB_BF16, {1}}, InitRule::uniform(0.5, 0.9)},
                        });
  gemm_rows::finish_row_problem(problem, shape);
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype), or
// nullopt.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> shape =
      gemm_rows::leading_inputs(in, num_inputs, num_outputs, 8, kLayout, 5);
  if (!shape || !ops::matches(in[7], KB_BF16, {1}) ||
      !ops::is_float_output(out[0], {shape->m, shape->n})) {
    return std::nullopt;
  }
  return shape;
}

int reference(const Shape& shape, const kb_config* cfg, const kb_tensor* in, kb_tensor* out) {
  const auto* bn_scale = static_cast<const bf16_t*>(in[3].data);
  const auto* bn_bias = static_cast<const bf16_t*>(in[4].data);
  const auto* bn_mean = static_cast<const bf16_t*>(in[5].data);
  const auto* bn_var = static_cast<const bf16_t*>(in[6].data);
  const double scale = bf16_to_f32(*static_cast<const bf16_t*>(in[7].data));
  gemm_rows::softmax_reference(shape, kLayout, in, out[0], [&](double* logits, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double normalized =
          (logits[j] - bf16_to_f32(bn_mean[j])) /
          std::sqrt(static_cast<double>(bf16_to_f32(bn_var[j])) + bn_eps_of(cfg));
      logits[j] = scale * (bf16_to_f32(bn_scale[j]) * normalized + bf16_to_f32(bn_bias[j]));
    }
  });
  return 0;
}

// What a fusing compiler emits: one GEMM with the bias fused into its epilogue, into f32 rows, then
// one pass per row while it is in cache: the batch norm and scale folded into one per-column
// multiply-add (scale * bn_scale / sqrt(bn_var + eps), and the matching shift), then the softmax,
// storing the output once (bf16 in the timed run, f32 in the oracle).
int baseline(const Shape& shape, const kb_config* cfg, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::ScratchMatrix logits = gemm_rows::gemm_f32(in, shape, kLayout, {.bias = bias.data()});
  const auto cols = static_cast<std::size_t>(shape.n);
  const ops::F32Buffer bn_scale = ops::load_f32(in[3]);
  const ops::F32Buffer bn_bias = ops::load_f32(in[4]);
  const ops::F32Buffer bn_mean = ops::load_f32(in[5]);
  const ops::F32Buffer bn_var = ops::load_f32(in[6]);
  const double scale = bf16_to_f32(*static_cast<const bf16_t*>(in[7].data));
  const double eps = bn_eps_of(cfg);
  std::vector<float> column_scale(cols), column_shift(cols);
  for (std::size_t j = 0; j < cols; ++j) {
    const double factor = bn_scale.data()[j] / std::sqrt(bn_var.data()[j] + eps);
    column_scale[j] = static_cast<float>(scale * factor);
    column_shift[j] = static_cast<float>(scale * (bn_bias.data()[j] - bn_mean.data()[j] * factor));
  }
  gemm_rows::finish_rows(logits, shape, out[0], [&](float* row, std::size_t n) {
    ops::scale_shift(row, column_scale.data(), column_shift.data(), n);
    ops::softmax(row, n);
  });
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result, then the bias add, the batch norm and the
// scale op by op, each rounded to bf16, then jax.nn.softmax in bf16.
int bf16_program(const Shape& shape, const kb_config* cfg, const kb_tensor* in, kb_tensor* out) {
  ops::ScratchMatrix product = gemm_rows::gemm_bf16(in, shape, kLayout);
  const auto cols = static_cast<std::size_t>(shape.n);
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  const ops::F32Buffer bn_scale = ops::load_f32(in[3]);
  const ops::F32Buffer bn_bias = ops::load_f32(in[4]);
  const ops::F32Buffer bn_mean = ops::load_f32(in[5]);
  const ops::F32Buffer bn_var = ops::load_f32(in[6]);
  const float scale = bf16_to_f32(*static_cast<const bf16_t*>(in[7].data));
  using ops::jnp::r;
  std::vector<float> std_dev(cols);  // jnp.sqrt(bn_var + bn_eps), both rounded
  for (std::size_t j = 0; j < cols; ++j)
    std_dev[j] = r(std::sqrt(r(bn_var.data()[j] + r(static_cast<float>(bn_eps_of(cfg))))));
  gemm_rows::bf16_softmax_rows(
      product, shape, out[0], [&](const bf16_t* y, float* row, std::size_t n) {
        for (std::size_t j = 0; j < n; ++j) {
          const float linear = r(bf16_to_f32(y[j]) + bias.data()[j]);
          const float normalized = r(r(linear - bn_mean.data()[j]) / std_dev[j]);
          row[j] = r(scale * r(r(bn_scale.data()[j] * normalized) + bn_bias.data()[j]));
        }
      });
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemmBatchNormScalingSoftmax43k = with_programs<Programs>({
    .name = "43k_Gemm_BatchNorm_Scaling_Softmax",
    .kernelbench_problem = 84,
    .summary = "softmax(scale * batchnorm_eval(x @ weight + bias)) over features, running stats",
    .problem = make_problem,
    .scaffold = scaffolds::k43k_Gemm_BatchNorm_Scaling_Softmax,
});

}  // namespace kbench
