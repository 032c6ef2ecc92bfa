// 8p_GEMM: the dense bf16 matmul of a Llama-3.1-70B FFN projection (hidden 8192 -> mlp 28672).
//
// Operator  out = A @ B (jnp.dot on bf16 operands, f32 accumulation, bf16 result).
// Inputs    A    bf16 (M, K)  normal
//           B    bf16 (K, N)  normal*0.02
// Output    out  bf16 (M, N)
// FLOPs     2*M*K*N; 3,848,290,697,216 at full size (M=8192, K=8192, N=28672).
// Character compute-bound: 2*M*K*N flops against 2*(M*K + K*N + M*N) bytes.
// Deviations
//   - The cpu preset is (M, K, N) = (768, 768, 2688): M = K and N = 3.5 K as in the original,
//     with every extent a multiple of 128 (baseline times per machine in docs/baselines.md).

#include "core/bf16.h"
#include "ops/gemm.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/kit/matmul.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using GemmShape = linear::Shape;

constexpr Presets<GemmShape> kPresets = {
    .smoke = {37, 45, 61},  // no extent a multiple of 8 or 16: exercises every tile edge
    .cpu = {768, 768, 2688},
    .full = {8192, 8192, 28672},
};

Problem make_problem(Size size) {
  const auto [m, k, n] = kPresets.at(size);
  Problem problem;
  problem.config = {{"M", m}, {"K", k}, {"N", n}};
  problem.inputs = {
      {{"A", KB_BF16, {m, k}}, InitRule::normal(1.0)},
      {{"B", KB_BF16, {k, n}}, InitRule::normal(0.02)},
  };
  problem.outputs = {{"out", KB_BF16, {m, n}}};
  problem.flops = gemm_flops(m, k, n);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// A (M, K) @ B (K, N), as a linear layer without bias: the extents of a call whose tensors match
// the signature above (any float output dtype), or nullopt.
constexpr linear::Call kCall{};
constexpr auto shape_of_call = linear::shape_of_call<kCall>;

int reference(const GemmShape& shape, const kb_tensor* in, kb_tensor* out) {
  matmul::reference_product(static_cast<const bf16_t*>(in[0].data),
                            static_cast<const bf16_t*>(in[1].data), shape.m, shape.k, shape.n,
                            static_cast<float*>(out[0].data));
  return 0;
}

// What XLA emits for jnp.dot on bf16 operands: one library GEMM accumulating in f32, rounded once,
// on the path measured fastest on this machine for this shape (docs/baselines.md).
int baseline(const GemmShape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false,
            ops::mutable_matrix_of(out[0]));
  return 0;
}

// The original program's arithmetic: jnp.dot on bf16 operands accumulates in f32 and holds a bf16
// result, rounded once; stored in the output's dtype.
int bf16_program(const GemmShape& shape, const kb_tensor* in, kb_tensor* out) {
  ops::ScratchMatrix c(KB_BF16, shape.m, shape.n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false, c.out());
  matmul::store_bf16(static_cast<const bf16_t*>(c.row(0)), shape.m * shape.n, out[0]);
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemm8p = with_programs<Programs>({
    .name = "8p_GEMM",
    .model = "Llama-3.1-70B FFN (hidden->mlp projection)",
    .summary = "Dense bf16 matmul out = A @ B, (M,K) x (K,N), f32 accumulation",
    .problem = make_problem,
    .scaffold = scaffolds::k8p_GEMM,
});

}  // namespace kbench
