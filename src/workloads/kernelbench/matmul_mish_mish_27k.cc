// 27k_Matmul_Mish_Mish: KernelBench level 2 problem 29 (PyTorch, translated to JAX):
// a linear layer, then Mish applied twice.
//
// Operator  out = mish(mish(x @ weight + bias)), mish(y) = y tanh(softplus(y)),
//           softplus(y) = log(1 + exp(y)).
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.02
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM with a transcendental epilogue (two exp, log1p, tanh per element)
//           that a fused kernel must keep off the critical path.
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

Problem make_problem(Size size) {
  const linear::Shape& shape = linear::kPresets.at(size);
  return linear::bias_layer_problem(shape);
}

// The inputs after x and weight: bias (N).
constexpr const linear::Call& kCall = linear::kBiasCall;

double mish(double y) {
  return y * std::tanh(std::log1p(std::exp(y)));
}

double epilogue(double y, std::int64_t j, const Vectors<double>& v) {
  return mish(mish(y + v[0][j]));
}

// What a fusing compiler emits: one GEMM whose epilogue adds the bias and applies both Mish
// functions to each output tile before its single bf16 store (oneDNN eltwise_mish twice).
int baseline(const kb_config* /*cfg*/, const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
             std::int32_t num_outputs) {
  return linear::fused_baseline(kCall, in, num_inputs, out, num_outputs,
                                {.activation = ops::Activation::kMish,
                                 .post_ops = {ops::PostOp::act(ops::Activation::kMish)}});
}

// mish on a bf16 tensor, as jax writes it: y * tanh(softplus(y)), each of the three rounded.
float mish_bf16(float y) {
  const float softplus = bf16r(y > 20.0f ? y : std::log1p(std::exp(y)));
  return bf16r(y * bf16r(std::tanh(softplus)));
}

// The JAX program's ops on bf16 tensors: (x @ weight) + bias, mish, mish.
float program_ops(float y, std::int64_t j, const Vectors<float>& v) {
  return mish_bf16(mish_bf16(bf16r(y + v[0][j])));
}

using Programs = linear::EpiloguePrograms<kCall, epilogue, baseline, program_ops>;

}  // namespace

const Workload kMatmulMishMish27k = with_programs<Programs>({
    .name = "27k_Matmul_Mish_Mish",
    .kernelbench_problem = 29,
    .summary = "mish(mish(x @ weight + bias)): bf16 (M,K) x (K,N) GEMM, transcendental epilogue",
    .problem = make_problem,
    // JAXBench's allclose(atol=1e-2) with rtol 2e-2, plus rel-L2 <= 1e-2. The original holds
    // two mishes (softplus, tanh and a product each) after the bf16 GEMM output: about nine
    // bf16 roundings, whose compounded relative error reaches 0.9% of an element (worst 0.92 of
    // JAXBench's rtol 1e-2 bound at cpu size, kbench validate --seeds 6); rtol 2e-2 doubles that.
    // rel-L2 stays 1e-2 (faithful 0.005), which rejects 5% noise at 5x.
    .tolerance = Tolerance{.atol = 1e-2, .rtol = 2e-2, .max_rel_l2 = 1e-2},
    .scaffold = scaffolds::k27k_Matmul_Mish_Mish,
});

}  // namespace kbench
