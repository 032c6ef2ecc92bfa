// 20k_Gemm_Multiply_LeakyReLU: KernelBench level 2 problem 12 (PyTorch, translated to JAX):
// a linear layer, a constant multiplier, then LeakyReLU with slope 0.1.
//
// Operator  y = (x @ weight + bias) * 2.0; out = where(y >= 0, y, 0.1 y).
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.02
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM with a two-step elementwise epilogue a fused kernel can hide;
//           x @ weight is signed (about half the elements take the 0.1 slope).
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

constexpr float kMultiplier = 2.0f;     // config_full.multiplier
constexpr double kNegativeSlope = 0.1;  // config_full.negative_slope

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  return linear::bias_layer_problem(
      shape, {{"multiplier", double{kMultiplier}}, {"negative_slope", kNegativeSlope}});
}

// The inputs after x and weight: bias (N).
constexpr const linear::Call& kCall = linear::kBiasCall;

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  const double scaled = (y + v[0][j]) * kMultiplier;
  return scaled >= 0 ? scaled : kNegativeSlope * scaled;
}

// What a fusing compiler emits: one GEMM whose epilogue adds the bias, doubles and applies the
// leaky ReLU to each output tile before its single bf16 store.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  return linear::fused_baseline(
      kCall, in, num_inputs, out, num_outputs,
      {.post_ops = {ops::PostOp::scalar(ops::BinaryOp::kMultiply, kMultiplier),
                    ops::PostOp::leaky_relu(static_cast<float>(kNegativeSlope))}});
}

// The JAX program's ops on bf16 tensors: (x @ weight) + bias, * 2.0, where(y >= 0, y, 0.1 * y),
// each rounded; the weakly typed 0.1 is a bf16 constant.
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  const float scaled = bf16r(bf16r(y + v[0][j]) * kMultiplier);
  return scaled >= 0.0f ? scaled : bf16r(bf16r(static_cast<float>(kNegativeSlope)) * scaled);
}

using Programs = linear::EpiloguePrograms<kCall, epilogue, baseline, program_ops>;

}  // namespace

const Workload kGemmMultiplyLeakyRelu20k = with_programs<Programs>({
    .name = "20k_Gemm_Multiply_LeakyReLU",
    .kernelbench_problem = 12,
    .summary =
        "leaky_relu((x @ weight + bias) * 2.0, 0.1): bf16 (M,K) x (K,N) GEMM, fused epilogue",
    .problem = make_problem,
    .scaffold = scaffolds::k20k_Gemm_Multiply_LeakyReLU,
});

}  // namespace kbench
