// 41k_Gemm_Add_ReLU: KernelBench level 2 problem 76 (PyTorch, translated to JAX): a linear layer
// without bias, then a separate bias add, then ReLU.
//
// Operator  out = relu(x @ weight + bias), bias broadcast over the rows.
// Inputs    x       bf16 (M, K)  uniform[0,1)   M = batch_size, K = in_features
//           weight  bf16 (K, N)  normal*0.02    N = out_features
//           bias    bf16 (N)     normal*0.02
// Output    out     bf16 (M, N)
// FLOPs     2*M*K*N (the bias add and ReLU are not counted); 549,755,813,888 at full size
//           (M=4096, K=8192, N=8192).
// Character compute-bound GEMM with a two-pass elementwise epilogue a fused kernel can hide.
// Deviations
//   - weight is (in_features, out_features), the JAX translation's `x @ weight`, not PyTorch's
//     nn.Linear (out_features, in_features) layout. The full shape is square, so only the smaller
//     presets tell the two apart.
//   - The cpu preset is (M, K, N) = (768, 1536, 1536): K = N = 2 M as in the original. Its baseline
//     takes 50-65 ms on one Zen 3 core (docs/baselines.md).
#include <cstdint>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/linear.h"
#include "workloads/kit/matmul.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

using GemmShape = linear::Shape;

Problem make_problem(Size size) {
  return linear::bias_layer_problem(linear::kPresets.at(size));
}

// The extents of a call whose tensors match the signature above (any float output dtype), or
// nullopt.
constexpr auto shape_of_call = linear::shape_of_call<linear::kBiasCall>;

int reference(const GemmShape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  const auto* x = static_cast<const bf16_t*>(in[0].data);
  const auto* weight = static_cast<const bf16_t*>(in[1].data);
  const auto* bias = static_cast<const bf16_t*>(in[2].data);
  auto* y = static_cast<float*>(out[0].data);
  std::vector<double> y_row(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) y_row[j] = bf16_to_f32(bias[j]);
    matmul::add_product_row(x + i * k, weight, k, n, y_row.data());
    for (std::int64_t j = 0; j < n; ++j)
      y[i * n + j] = static_cast<float>(y_row[j] > 0 ? y_row[j] : 0);
  }
  return 0;
}

// What a fusing compiler emits: one GEMM whose epilogue adds the bias and applies the ReLU to each
// output tile before its single bf16 store (oneDNN post-ops, or per tile on the OpenBLAS path).
int baseline(const GemmShape& /*shape*/, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false,
            ops::mutable_matrix_of(out[0]),
            {.bias = bias.data(), .activation = ops::Activation::kRelu});
  return 0;
}

// The original program's arithmetic: x @ weight on bf16 operands holds a bf16 result, the bias add
// rounds to bf16 again, and ReLU is exact; stored in the output's dtype.
int bf16_program(const GemmShape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  ops::ScratchMatrix y(KB_BF16, m, n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false, y.out());
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  for (std::int64_t i = 0; i < m; ++i) {
    const auto* y_row = static_cast<const bf16_t*>(y.row(i));
    for (std::int64_t j = 0; j < n; ++j) {
      const float biased = round_to_bf16(bf16_to_f32(y_row[j]) + bias.data()[j]);
      const float value = biased > 0.0f ? biased : 0.0f;
      if (out[0].dtype == KB_BF16)
        static_cast<bf16_t*>(out[0].data)[i * n + j] = f32_to_bf16(value);
      else
        static_cast<float*>(out[0].data)[i * n + j] = value;
    }
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemmAddRelu41k = with_programs<Programs>({
    .name = "41k_Gemm_Add_ReLU",
    .kernelbench_problem = 76,
    .summary = "relu(x @ weight + bias): bf16 (M,K) x (K,N) GEMM, row-broadcast bias, ReLU",
    .problem = make_problem,
    .scaffold = scaffolds::k41k_Gemm_Add_ReLU,
});

}  // namespace kbench
