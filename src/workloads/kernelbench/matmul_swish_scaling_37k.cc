// 37k_Matmul_Swish_Scaling: KernelBench level 2 problem 59 (PyTorch, translated to JAX):
// a linear layer, Swish, then a constant scale.
//
// Operator  y = x @ weight + bias; out = y * sigmoid(y) * 2.0.
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.02
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM with a one-exp epilogue a fused kernel can hide.
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`, not PyTorch's
//     nn.Linear (out_features, in_features) layout.
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ops/gemm.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using linear::bf16r;
using linear::Vectors;

constexpr float kScalingFactor = 2.0f;  // config_full.scaling_factor

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  return linear::bias_layer_problem(shape, {{"scaling_factor", double{kScalingFactor}}});
}

// The inputs after x and weight: bias (N).
constexpr const linear::Call& kCall = linear::kBiasCall;

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  const double linear = y + v[0][j];
  return linear / (1.0 + std::exp(-linear)) * kScalingFactor;
}

// What a fusing compiler emits: one GEMM whose epilogue adds the bias, applies Swish and scales
// each output tile before its single bf16 store.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  return linear::fused_baseline(
      kCall, in, num_inputs, out, num_outputs,
      {.activation = ops::Activation::kSilu,
       .post_ops = {ops::PostOp::scalar(ops::BinaryOp::kMultiply, kScalingFactor)}});
}

// The JAX program's ops on bf16 tensors: (x @ weight) + bias, y * sigmoid(y), * 2.0, each rounded.
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  const float linear = bf16r(y + v[0][j]);
  const float swish = bf16r(linear * bf16r(1.0f / (1.0f + std::exp(-linear))));
  return bf16r(swish * kScalingFactor);
}

using Programs = linear::EpiloguePrograms<kCall, epilogue, baseline, program_ops>;

}  // namespace

const Workload kMatmulSwishScaling37k = with_programs<Programs>({
    .name = "37k_Matmul_Swish_Scaling",
    .kernelbench_problem = 59,
    .summary = "swish(x @ weight + bias) * 2.0: bf16 (M,K) x (K,N) GEMM, fused epilogue",
    .problem = make_problem,
    // JAXBench's allclose(atol=1e-2) with rtol 2e-2, plus rel-L2 <= 1e-2. The original holds
    // swish (a sigmoid and a product) and the scaling after the bf16 GEMM output and bias add:
    // five bf16 roundings, whose compounded relative error reached 0.84 of JAXBench's rtol 1e-2
    // bound at cpu size (kbench validate --seeds 6); rtol 2e-2 doubles the margin. rel-L2 stays
    // 1e-2 (faithful 0.0036), which rejects 5% noise at 5x.
    .tolerance = Tolerance{.atol = 1e-2, .rtol = 2e-2, .max_rel_l2 = 1e-2},
    .scaffold = scaffolds::k37k_Matmul_Swish_Scaling,
});

}  // namespace kbench
