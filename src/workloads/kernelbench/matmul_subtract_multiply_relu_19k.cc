// 19k_Matmul_Subtract_Multiply_ReLU: KernelBench level 2 problem 9 (PyTorch, translated to JAX):
// a linear layer, a constant subtracted, a constant multiplied, then ReLU.
//
// Operator  out = relu((x @ weight + bias - 2.0) * 1.5), bias broadcast over the rows.
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02 at full size (see Deviations)   N = out_features
//           bias    bf16 (N)     normal*0.1  (spec: normal*0.02; see Deviations)
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM with a four-step elementwise epilogue; the ReLU after the
//           shift by -2 passes only the upper tail of x @ weight (~3% of elements at full size).
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`, not PyTorch's
//     nn.Linear (out_features, in_features) layout.
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
//   - Non-degeneracy: x @ weight has standard deviation ~0.02 sqrt(K/3), 1.05 at the full
//     K = 8192 but 0.45 at the cpu K = 1536, where y - 2 > 0 for ~5e-6 of the elements: the
//     output would be all zeros but a handful. So below full size weight is normal with standard
//     deviation 0.02 sqrt(8192 / K), which gives x @ weight its full-size spread and the ReLU its
//     full-size ~3% of nonzero outputs, at every size.
//   - Tolerance: see kTolerance (the faithful bf16 program fails the default).
//   - bias normal*0.1 instead of normal*0.02: an output computed without it (at 0) came to 1.6 of
//     the rule's bound at its worst over 10 smoke seeds (2.5 or more over 2 cpu seeds), too close
//     for the rule to be sure to notice a kernel that drops it; now 7.8 (smoke) and 13.5 (cpu)
//     (suite_test, docs/workloads.md).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ops/gemm.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using linear::bf16r;
using linear::Vectors;

constexpr float kSubtractValue = 2.0f;  // config_full.subtract_value
constexpr float kMultiplyValue = 1.5f;  // config_full.multiply_value

constexpr Presets<linear::Shape> kPresets = {
    // No extent a multiple of 8 or 16: exercises every tile edge. Larger than the other
    // workloads' smoke shapes so that ~3% of nonzero outputs are still ~1000 values (at ~150 the
    // bf16 program's rel-L2 error varied up to 0.99 of the bound over 40 seeds).
    .smoke = {125, 53, 251},
    .cpu = {768, 1536, 1536},
    .full = {4096, 8192, 8192},
};

// The weight's standard deviation at in_features k: the spec's 0.02 at full size (k = 8192),
// scaled by sqrt(8192 / k) below it so that x @ weight keeps its full-size spread.
double weight_stddev(std::int64_t k) {
  return 0.02 * std::sqrt(8192.0 / static_cast<double>(k));
}

// The faithful bf16 program fails the default rule: its matmul result and bias sum are each
// rounded to bf16 near 2 (half an ulp is 2^-7 on [2, 4)), the shift by -2.0 cancels the value but
// not that error, and * 1.5 scales it: up to 1.5 * 2 * 2^-7 = 0.023 absolute on outputs near 0,
// against nonzero outputs of ~0.75 RMS, a ~1.3% relative L2 error at the cpu size. atol = 3e-2
// covers the worst element (larger outputs have larger ulps, which rtol covers) and rel-L2 <=
// 2.5e-2 the L2 error with 2x margin; zeros, ones, the mean and permuted rows stay far off
// (rel-L2 >= 1) and 5% noise fails the rel-L2 bound by 2x.
constexpr Tolerance kTolerance{.atol = 3e-2, .rtol = 1e-2, .max_rel_l2 = 2.5e-2};

Problem make_problem(Size size) {
  const linear::Shape& shape = kPresets.at(size);
  return linear::bias_layer_problem(
      shape,
      {{"subtract_value", double{kSubtractValue}}, {"multiply_value", double{kMultiplyValue}}}, {},
      {.weight = InitRule::normal(weight_stddev(shape.k)), .bias_init = InitRule::normal(0.1)});
}

// The inputs after x and weight: bias (N).
constexpr const linear::Call& kCall = linear::kBiasCall;

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  const double shifted = (y + v[0][j] - kSubtractValue) * kMultiplyValue;
  return shifted > 0 ? shifted : 0;
}

// What a fusing compiler emits: one GEMM whose epilogue adds the bias, subtracts 2, multiplies by
// 1.5 and applies the ReLU to each output tile before its single bf16 store.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  return linear::fused_baseline(
      kCall, in, num_inputs, out, num_outputs,
      {.post_ops = {ops::PostOp::scalar(ops::BinaryOp::kSubtract, kSubtractValue),
                    ops::PostOp::scalar(ops::BinaryOp::kMultiply, kMultiplyValue),
                    ops::PostOp::act(ops::Activation::kRelu)}});
}

// The JAX program's ops on bf16 tensors: (x @ weight) + bias, - 2.0, * 1.5, relu, each rounded.
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  const float shifted = bf16r(bf16r(bf16r(y + v[0][j]) - kSubtractValue) * kMultiplyValue);
  return shifted > 0.0f ? shifted : 0.0f;
}

using Programs = linear::EpiloguePrograms<kCall, epilogue, baseline, program_ops>;

}  // namespace

const Workload kMatmulSubtractMultiplyRelu19k = with_programs<Programs>({
    .name = "19k_Matmul_Subtract_Multiply_ReLU",
    .kernelbench_problem = 9,
    .summary = "relu((x @ weight + bias - 2.0) * 1.5): bf16 (M,K) x (K,N) GEMM, four-step epilogue",
    .problem = make_problem,
    .tolerance = kTolerance,
    .scaffold = scaffolds::k19k_Matmul_Subtract_Multiply_ReLU,
});

}  // namespace kbench
