// 30k_Matmul_Scaling_ResidualAdd: KernelBench level 2 problem 40 (PyTorch, translated to JAX):
// a linear layer, its output scaled by 0.5 and added back to itself.
//
// Operator  y = x @ weight + bias; out = y * 0.5 + y.
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.02
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size
//           (M=16384, K=4096, N=4096).
// Character compute-bound GEMM (M = 4 K) with a linear epilogue.
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`, not PyTorch's
//     nn.Linear (out_features, in_features) layout.
//   - The cpu preset is (M, K, N) = (3072, 768, 768): M = 4 K = 4 N as in the original.
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

constexpr float kScalingFactor = 0.5f;  // config_full.scaling_factor

constexpr Presets<linear::Shape> kPresets = {
    .smoke = {67, 29, 31},  // no extent a multiple of 8 or 16: exercises every tile edge
    .cpu = {3072, 768, 768},
    .full = {16384, 4096, 4096},
};

Problem make_problem(Size size) {
  const linear::Shape& shape = kPresets.at(size);
  return linear::bias_layer_problem(shape, {{"scaling_factor", double{kScalingFactor}}});
}

// The inputs after x and weight: bias (N).
constexpr const linear::Call& kCall = linear::kBiasCall;

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  const double linear = y + v[0][j];
  return linear * kScalingFactor + linear;
}

// What a fusing compiler emits: one GEMM whose epilogue adds the bias and the scaled residual to
// each output tile before its single bf16 store. y * 0.5 is exact in f32 (a power of two), so
// y * 0.5 + y is the exact 1.5 y rounded once: the same f32 value as y * 1.5, one post-op.
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  return linear::fused_baseline(
      kCall, in, num_inputs, out, num_outputs,
      {.post_ops = {ops::PostOp::scalar(ops::BinaryOp::kMultiply, 1.5f)}});
}

// The JAX program's ops on bf16 tensors: (x @ weight) + bias, * 0.5 (exact), + the unscaled value.
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  const float linear = bf16r(y + v[0][j]);
  return bf16r(bf16r(linear * kScalingFactor) + linear);
}

using Programs = linear::EpiloguePrograms<kCall, epilogue, baseline, program_ops>;

}  // namespace

const Workload kMatmulScalingResidualAdd30k = with_programs<Programs>({
    .name = "30k_Matmul_Scaling_ResidualAdd",
    .kernelbench_problem = 40,
    .summary =
        "y * 0.5 + y for y = x @ weight + bias: bf16 (M,K) x (K,N) GEMM, M = 4K, linear epilogue",
    .problem = make_problem,
    .scaffold = scaffolds::k30k_Matmul_Scaling_ResidualAdd,
});

}  // namespace kbench
