// 31k_Gemm_BatchNorm_GELU_ReLU: KernelBench level 2 problem 41 (PyTorch, translated to JAX): a
// linear layer, training-mode batch norm (statistics of the batch itself), GELU, ReLU.
//
// Operator  y = x @ gemm_weight.T + gemm_bias;
//           mean[j] = mean over rows of y[:, j], var[j] = mean over rows of (y[:, j] - mean[j])^2;
//           z = (y - mean) / sqrt(var + 1e-5) * bn_weight + bn_bias;
//           out = relu(gelu(z)), gelu = jax.nn.gelu's default tanh form.
// Inputs    x            bf16 (M, K)  uniform[0,1)     M = batch_size, K = in_features
//           gemm_weight  bf16 (N, K)  normal           N = out_features (nn.Linear layout)
//           gemm_bias    bf16 (N)     normal
//           bn_weight    bf16 (N)     normal*0.1 + 1   (spec: ones; see Deviations)
//           bn_bias      bf16 (N)     normal*0.1       (spec: zeros; see Deviations)
// Output    out          bf16 (M, N)
// FLOPs     2*M*K*N (the epilogue is not counted); 2,199,023,255,552 at full size (M=16384,
//           K=8192, N=8192).
// Character compute-bound GEMM whose every output depends on its whole column: the statistics
//           need the complete (M, N) product before any output can be written.
// Deviations
//   - The cpu preset is (M, K, N) = (2048, 1024, 1024): M = 2 K = 2 N as in the original.
//   - bn_weight and bn_bias are ones and zeros in the spec, which makes the affine step the
//     identity: a kernel that ignored both would pass. They are drawn near those values instead
//     (1 + 0.1 normal, 0.1 normal), so the affine step changes the output by ~10% and must be
//     computed.
//   - Tolerance (atol, rtol, rel-L2) = (0.05, 0.08, 0.02), not JAXBench's (0.01, 0.01, 0.01): the
//     original rounds to bf16 after the matmul, the bias add, the batch mean, each difference and
//     square, the variance, the normalization and affine step, and every op of the tanh GELU; the
//     batch mean it subtracts is ~2 sd of a column, so each rounding of y counts twice over in z.
//     That program's worst element needs (0.025, 0.04) on 20 smoke and 3 cpu seeds; the bound
//     doubles it.
//   - gemm_bias cancels exactly in the batch statistics (y - mean does not depend on it), in the
//     original as here: a kernel may skip it (cancelled_inputs). This is the operator's own
//     property, left as is.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/jnp_bf16.h"
#include "ops/rows.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/gemm_rows.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr std::string_view kCancelledInputs[] = {"gemm_bias"};

using gemm_rows::at;
using gemm_rows::Shape;
using gemm_rows::WeightLayout;

constexpr double kEps = 1e-5;  // the BatchNorm's epsilon in the original

constexpr WeightLayout kLayout = WeightLayout::kOutIn;

constexpr Presets<Shape> kPresets = {
    .smoke = {37, 53, 47},  // no extent a multiple of 8 or 16: exercises every tile edge
    .cpu = {2048, 1024, 1024},
    .full = {16384, 8192, 8192},
};

Problem make_problem(Size size) {
  const Shape shape = kPresets.at(size);
  const auto [m, k, n] = shape;
  Problem problem = gemm_rows::linear_problem(shape, kLayout, "gemm_weight", InitRule::normal());
  problem.inputs.insert(problem.inputs.end(),
                        {
                            {{"gemm_bias", KB_BF16, {n}}, InitRule::normal()},
                            {{"bn_weight", KB_BF16, {n}}, InitRule::normal(0.1, 1.0)},
                            {{"bn_bias", KB_BF16, {n}}, InitRule::normal(0.1)},
                        });
  gemm_rows::finish_row_problem(problem, shape);
  return problem;
}

// The extents of a call whose tensors match the signature above (any float output dtype) with at
// least one row to take statistics over, or nullopt.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  const std::optional<Shape> shape =
      gemm_rows::plain_call<kLayout, 3>(in, num_inputs, out, num_outputs);
  if (!shape || shape->m <= 0) return std::nullopt;
  return shape;
}

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  std::vector<double> y(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    gemm_rows::reference_row(in[0], in[1], kLayout, &in[2], shape, i, y.data() + i * n);
  auto* result = static_cast<float*>(out[0].data);
  for (std::int64_t j = 0; j < n; ++j) {
    double mean = 0, var = 0;
    for (std::int64_t i = 0; i < m; ++i) mean += y[i * n + j];
    mean /= static_cast<double>(m);
    for (std::int64_t i = 0; i < m; ++i) var += (y[i * n + j] - mean) * (y[i * n + j] - mean);
    var /= static_cast<double>(m);
    for (std::int64_t i = 0; i < m; ++i) {
      const double z = (y[i * n + j] - mean) / std::sqrt(var + kEps) * at(in[3], j) + at(in[4], j);
      const double gelu =
          0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z)));
      result[i * n + j] = static_cast<float>(gelu > 0 ? gelu : 0.0);
    }
  }
  return 0;
}

// What a fusing compiler emits: one GEMM with the bias fused into its epilogue, into an f32 (M, N)
// product; one pass over it for the column means and one for the variances; then one pass per row
// applying the batch norm as a per-column multiply-add, GELU and ReLU, storing the output once
// (bf16 in the timed run, f32 in the oracle).
int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const ops::F32Buffer gemm_bias = ops::load_f32(in[2]);
  const ops::F32Buffer bn_weight = ops::load_f32(in[3]);
  const ops::F32Buffer bn_bias = ops::load_f32(in[4]);
  ops::ScratchMatrix y = gemm_rows::gemm_f32(in, shape, kLayout, {.bias = gemm_bias.data()});
  const auto cols = static_cast<std::size_t>(shape.n);
  std::vector<float> mean(cols), var(cols);
  ops::column_mean_var(static_cast<const float*>(y.in().data), static_cast<std::size_t>(shape.m),
                       cols, mean.data(), var.data());
  std::vector<float> column_scale(cols), column_shift(cols);
  for (std::size_t j = 0; j < cols; ++j) {
    column_scale[j] = bn_weight.data()[j] / std::sqrt(var[j] + static_cast<float>(kEps));
    column_shift[j] = bn_bias.data()[j] - mean[j] * column_scale[j];
  }
  gemm_rows::finish_rows(y, shape, out[0], [&](float* row, std::size_t n) {
    ops::scale_shift(row, column_scale.data(), column_shift.data(), n);
    ops::gelu_tanh_relu(row, n);
  });
  return 0;
}

// The original on bf16 tensors: the matmul's bf16 result and the bias add rounded; the batch mean
// (jnp.mean: f32 sum, bf16 result); the variance as jnp.mean of the rounded squares of the rounded
// differences; the normalization, affine step, GELU and ReLU op by op, each rounded to bf16.
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const auto [m, k, n] = shape;
  ops::ScratchMatrix product = gemm_rows::gemm_bf16(in, shape, kLayout);
  const ops::F32Buffer gemm_bias = ops::load_f32(in[2]);
  const ops::F32Buffer bn_weight = ops::load_f32(in[3]);
  const ops::F32Buffer bn_bias = ops::load_f32(in[4]);
  using ops::jnp::r;
  const auto rows = static_cast<std::size_t>(m);
  const auto cols = static_cast<std::size_t>(n);
  std::vector<float> y(rows * cols);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto* yi = static_cast<const bf16_t*>(product.row(static_cast<std::int64_t>(i)));
    for (std::size_t j = 0; j < cols; ++j)
      y[i * cols + j] = r(bf16_to_f32(yi[j]) + gemm_bias.data()[j]);
  }
  std::vector<float> mean(cols), var(cols, 0.0f), std_dev(cols);
  for (std::size_t j = 0; j < cols; ++j) mean[j] = ops::jnp::mean(y.data() + j, rows, cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const float d = r(y[i * cols + j] - mean[j]);
      var[j] += r(d * d);
    }
  const float eps = r(static_cast<float>(kEps));
  for (std::size_t j = 0; j < cols; ++j)
    std_dev[j] = r(std::sqrt(r(r(var[j] / static_cast<float>(rows)) + eps)));
  std::vector<float> row(cols);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      const float z = r(r(r(r(y[i * cols + j] - mean[j]) / std_dev[j]) * bn_weight.data()[j]) +
                        bn_bias.data()[j]);
      const float gelu = ops::jnp::gelu_tanh(z);
      row[j] = gelu > 0 ? gelu : 0.0f;
    }
    ops::store_row(row.data(), cols, out[0], i * cols);
  }
  return 0;
}

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kGemmBatchNormGeluRelu31k = with_programs<Programs>({
    .name = "31k_Gemm_BatchNorm_GELU_ReLU",
    .kernelbench_problem = 41,
    .summary = "relu(gelu(batchnorm_train(x @ weight.T + bias))): batch statistics over axis 0",
    .problem = make_problem,
    // The bf16 program rounds ~15 times between the GEMM and the output, and the batch statistics
    // cancel y's column mean (|y| ~ 2 sd, so each rounding of y costs 2x in z; see the header):
    // its worst element over 20 smoke and 3 cpu seeds needs (atol, rtol) = (0.025, 0.04), its
    // rel-L2 reaches 0.0083. The bound doubles both; oracle + 5% noise (rel-L2 0.05) stays 2.5x
    // over it.
    .tolerance = {.atol = 5e-2, .rtol = 8e-2, .max_rel_l2 = 2e-2},
    .cancelled_inputs = kCancelledInputs,
    .scaffold = scaffolds::k31k_Gemm_BatchNorm_GELU_ReLU,
});

}  // namespace kbench
