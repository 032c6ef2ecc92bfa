// 48k_Matmul_BatchNorm_BiasAdd_Divide_Swish: KernelBench level 2 problem 97 (PyTorch, translated to
// JAX): a linear layer, an inference-mode BatchNorm over the features, a scalar bias, a division
// by 1.0, then Swish.
//
// Operator  y = x @ weight + linear_bias;
//           y = (y - bn_mean) / sqrt(bn_var + 1e-5) * bn_scale + bn_bias  (per feature);
//           y = (y + bias) / 1.0; out = y * sigmoid(y).
// Inputs    x           bf16 (M, K)  uniform[0,1)       M = batch_size, K = in_features
//           weight      bf16 (K, N)  normal*0.02        N = out_features
//           linear_bias bf16 (N)     normal*0.02
//           bn_scale    bf16 (N)     spec: ones  -> uniform[0.5,1.5)  (see Deviations)
//           bn_bias     bf16 (N)     spec: zeros -> normal*0.1
//           bn_mean     bf16 (N)     spec: zeros -> normal*0.1
//           bn_var      bf16 (N)     spec: ones  -> uniform[0.5,1.5)
//           bias        bf16 (1)     normal*0.1  (spec: normal*0.02; see Deviations)
// Output    out         bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM with a per-feature affine epilogue and a Swish a fused kernel
//           can hide.
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`, not PyTorch's
//     nn.Linear (out_features, in_features) layout.
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - Non-degeneracy: the spec's running statistics and affine parameters (mean 0, var 1, scale 1,
//     bias 0) make the BatchNorm the identity up to 1/sqrt(1 + 1e-5), so a kernel ignoring four of
//     its eight inputs would pass. They are drawn instead around the same values (scale and var
//     uniform[0.5, 1.5), mean and bias normal*0.1 against x @ weight's ~0.45 spread at cpu size),
//     so that dropping or misindexing any of them fails the check.
//   - Tolerance: rtol 3e-2, see kTolerance (the faithful bf16 program fails the default).
//   - The BatchNorm is written as JAX code commonly writes it, (y - mean) / sqrt(var + eps) *
//     scale + bias; the division stays a division (oneDNN binary_div), as does the one by 1.0.
//   - bias normal*0.1 instead of normal*0.02: an output computed without it (at 0) came to 1.47
//     (cpu) of the rule's bound at its worst over 10 smoke and 2 cpu seeds, too close for the rule
//     to be sure to notice a kernel that drops it; now 21.8 (smoke) and 7.1 (cpu) (suite_test,
//     docs/workloads.md).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ops/buffers.h"
#include "ops/gemm.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using linear::bf16r;
using linear::Extent;
using linear::Vectors;

// BatchNorm1d's eps.
constexpr double kBnEps = 1e-5;       // config_full.bn_eps
constexpr double kBnMomentum = 0.1;   // config_full.bn_momentum (eval mode: unused)
constexpr float kDivideValue = 1.0f;  // config_full.divide_value

// The faithful bf16 program fails the default elementwise rule at the cpu size: it rounds nine
// times (the matmul result, five per-feature ops, the scalar bias, the sigmoid and the product),
// each by up to 2^-9 relative, and the four roundings before the normalization are amplified by
// up to bn_scale / sqrt(bn_var) = 1.5 / sqrt(0.5) = 2.1: a worst case of (4 * 2.1 + 5) * 2^-9 =
// 2.6% relative, of which 2.3% was seen (0.041 on outputs near 1.8, against 0.028 allowed). rtol
// = 3e-2 admits it; atol and the rel-L2 bound stay JAXBench's (the program's rel-L2 is ~0.6%),
// so every degenerate output still fails the rel-L2 bound by 5x or more.
constexpr Tolerance kTolerance{.atol = 1e-2, .rtol = 3e-2, .max_rel_l2 = 1e-2};

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  const std::int64_t n = shape.n;
  return linear::problem(
      shape,
      linear::layer_config(shape, {{"bn_eps", kBnEps},
                                   {"bn_momentum", kBnMomentum},
                                   {"divide_value", double{kDivideValue}}}),
      linear::layer_inputs(shape, linear::WeightLayout::kInOut, {.bias = "linear_bias"},
                           {
                               {{"bn_scale", KB_BF16, {n}}, InitRule::uniform(0.5, 1.5)},
                               {{"bn_bias", KB_BF16, {n}}, InitRule::normal(0.1)},
                               {{"bn_mean", KB_BF16, {n}}, InitRule::normal(0.1)},
                               {{"bn_var", KB_BF16, {n}}, InitRule::uniform(0.5, 1.5)},
                               {{"bias", KB_BF16, {1}}, InitRule::normal(0.1)},
                           }),
      {shape.m, n});
}

// The inputs after x and weight: linear_bias, bn_scale, bn_bias, bn_mean, bn_var (N), bias (1).
constexpr Extent kVectors[] = {Extent::kColumns, Extent::kColumns, Extent::kColumns,
                               Extent::kColumns, Extent::kColumns, Extent::kScalar};
constexpr linear::Call kCall{.vectors = kVectors};

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  const double linear = y + v[0][j];
  const double normalized = (linear - v[3][j]) / std::sqrt(v[4][j] + kBnEps) * v[1][j] + v[2][j];
  const double shifted = (normalized + v[5][0]) / kDivideValue;
  return shifted / (1.0 + std::exp(-shifted));
}

// What a fusing compiler emits: one GEMM whose epilogue adds the linear bias, normalizes each
// feature with its running statistics and affine parameters, adds the scalar bias, divides by 1.0
// and applies Swish to each output tile before its single bf16 store. sqrt(var + eps) is one f32
// value per feature, computed once per call as the program computes it.
int baseline(const linear::Shape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer bn_scale = ops::load_f32(in[3]);
  const ops::F32Buffer bn_bias = ops::load_f32(in[4]);
  const ops::F32Buffer bn_mean = ops::load_f32(in[5]);
  ops::F32Buffer bn_std = ops::load_f32(in[6]);
  for (std::size_t j = 0; j < bn_std.size(); ++j)
    bn_std.data()[j] = std::sqrt(bn_std.data()[j] + static_cast<float>(kBnEps));
  const float bias = ops::load_f32(in[7]).data()[0];
  linear::gemm(in[0], in[1], kCall.layout, &in[2], ops::mutable_matrix_of(out[0]),
               {.post_ops = {ops::PostOp::column(ops::BinaryOp::kSubtract, bn_mean.data()),
                             ops::PostOp::column(ops::BinaryOp::kDivide, bn_std.data()),
                             ops::PostOp::column(ops::BinaryOp::kMultiply, bn_scale.data()),
                             ops::PostOp::column(ops::BinaryOp::kAdd, bn_bias.data()),
                             ops::PostOp::scalar(ops::BinaryOp::kAdd, bias),
                             ops::PostOp::scalar(ops::BinaryOp::kDivide, kDivideValue),
                             ops::PostOp::act(ops::Activation::kSilu)}});
  return 0;
}

// The JAX program's ops on bf16 tensors, each rounded: (x @ weight) + linear_bias, - bn_mean,
// / sqrt(bn_var + eps) (the sum and the root rounded too, eps a bf16 constant), * bn_scale,
// + bn_bias, + bias, / 1.0, then y * sigmoid(y).
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  const float linear = bf16r(y + v[0][j]);
  const float bn_std = bf16r(std::sqrt(bf16r(v[4][j] + bf16r(static_cast<float>(kBnEps)))));
  const float normalized =
      bf16r(bf16r(bf16r(bf16r(linear - v[3][j]) / bn_std) * v[1][j]) + v[2][j]);
  const float shifted = bf16r(bf16r(normalized + v[5][0]) / kDivideValue);
  return bf16r(shifted * bf16r(1.0f / (1.0f + std::exp(-shifted))));
}

using Programs =
    linear::EpiloguePrograms<kCall, epilogue, checked_entry<linear::shape_of_call<kCall>, baseline>,
                             program_ops>;

}  // namespace

const Workload kMatmulBatchNormBiasAddDivideSwish48k = with_programs<Programs>({
    .name = "48k_Matmul_BatchNorm_BiasAdd_Divide_Swish",
    .kernelbench_problem = 97,
    .summary =
        "swish((bn_eval(x @ weight + linear_bias) + bias) / 1.0): bf16 GEMM, per-feature epilogue",
    .problem = make_problem,
    .tolerance = kTolerance,
    .scaffold = scaffolds::k48k_Matmul_BatchNorm_BiasAdd_Divide_Swish,
});

}  // namespace kbench
