// The linear-layer-then-row-pass workloads' shared checks, reference rows and GEMM drivers.
#include "workloads/kit/gemm_rows.h"

#include <algorithm>

#include "ops/tensor_checks.h"

namespace kbench::gemm_rows {

Problem linear_problem(const Shape& shape, WeightLayout layout, const char* weight_name,
                       InitRule weight_init) {
  const auto [m, k, n] = shape;
  Problem problem;
  problem.config = {{"batch_size", m}, {"in_features", k}, {"out_features", n}};
  problem.inputs = {
      {{"x", KB_BF16, {m, k}}, InitRule::uniform(0.0, 1.0)},
      {{weight_name, KB_BF16,
        layout == WeightLayout::kInOut ? std::vector<std::int64_t>{k, n}
                                       : std::vector<std::int64_t>{n, k}},
       weight_init},
  };
  return problem;
}

Problem grouped_problem(const GroupedShape& shape, WeightLayout layout, const char* weight_name,
                        InitRule weight_init) {
  const auto [m, k, n, num_groups] = shape;
  Problem problem = linear_problem({m, k, n}, layout, weight_name, weight_init);
  problem.config.push_back({"num_groups", num_groups});
  problem.params = {{"num_groups", static_cast<double>(num_groups)}};
  return problem;
}

Problem group_norm_problem(const GroupedShape& shape, WeightLayout layout, const char* weight_name,
                           const char* bias_name) {
  const std::int64_t n = shape.n;
  Problem problem = grouped_problem(shape, layout, weight_name, InitRule::normal(0.02));
  problem.inputs.insert(problem.inputs.end(),
                        {
                            {{bias_name, KB_BF16, {n}}, InitRule::normal(0.1)},
                            {{"gn_weight", KB_BF16, {n}}, InitRule::normal(0.1, 1.0)},
                            {{"gn_bias", KB_BF16, {n}}, InitRule::normal(0.3)},
                        });
  return problem;
}

void finish_problem(Problem& problem, const Shape& shape) {
  problem.flops = gemm_flops(shape.m, shape.k, shape.n);
  problem.min_bytes = tensor_bytes(problem);
}

RowGroupNorm::RowGroupNorm(const GroupedShape& shape, const kb_tensor* in)
    : n_(static_cast<std::size_t>(shape.n)),
      group_size_(static_cast<std::size_t>(shape.n / shape.num_groups)),
      gn_weight_(ops::load_f32(in[3])),
      gn_bias_(ops::load_f32(in[4])) {}

void RowGroupNorm::operator()(float* row, const float* add) const {
  ops::group_norm(row, n_, group_size_, static_cast<float>(kGroupNormEps), add, gn_weight_.data(),
                  gn_bias_.data());
}

void RowGroupNorm::bf16(float* row) const {
  ops::jnp::group_norm(row, n_, group_size_, static_cast<float>(kGroupNormEps), gn_weight_.data(),
                       gn_bias_.data());
}

void finish_row_problem(Problem& problem, const Shape& shape) {
  problem.outputs = {{"out", KB_BF16, {shape.m, shape.n}}};
  finish_problem(problem, shape);
}

std::optional<Shape> leading_inputs(const kb_tensor* in, std::int32_t num_inputs,
                                    std::int32_t num_outputs, std::int32_t expected_inputs,
                                    WeightLayout layout, int vectors) {
  if (num_inputs != expected_inputs || num_outputs != 1) return std::nullopt;
  const std::optional<Shape> shape = linear::shape_of(in[0], in[1], layout, nullptr);
  if (!shape) return std::nullopt;
  for (int i = 2; i < 2 + vectors; ++i)
    if (!ops::matches(in[i], KB_BF16, {shape->n})) return std::nullopt;
  return shape;
}

std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs,
                                   WeightLayout layout, int vectors) {
  const std::optional<Shape> shape =
      leading_inputs(in, num_inputs, num_outputs, 2 + vectors, layout, vectors);
  if (!shape || !ops::is_float_output(out[0], {shape->m, shape->n})) return std::nullopt;
  return shape;
}

std::optional<GroupedShape> with_groups(const kb_config* cfg, const std::optional<Shape>& shape) {
  if (!shape) return std::nullopt;
  const auto num_groups = static_cast<std::int64_t>(kb_param_or(cfg, "num_groups", 0));
  if (num_groups <= 0 || shape->n % num_groups != 0) return std::nullopt;
  return GroupedShape{shape->m, shape->k, shape->n, num_groups};
}

void reference_row(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                   const kb_tensor* bias, const Shape& shape, std::int64_t i, double* y) {
  const auto [m, k, n] = shape;
  const auto* xs = static_cast<const bf16_t*>(x.data);
  const auto* ws = static_cast<const bf16_t*>(weight.data);
  if (layout == WeightLayout::kInOut) {
    // i-p-j order: weight read along its rows.
    for (std::int64_t j = 0; j < n; ++j) y[j] = bias != nullptr ? at(*bias, j) : 0.0;
    for (std::int64_t p = 0; p < k; ++p) {
      const double x_ip = bf16_to_f32(xs[i * k + p]);
      for (std::int64_t j = 0; j < n; ++j) y[j] += x_ip * bf16_to_f32(ws[p * n + j]);
    }
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) {
    double dot = bias != nullptr ? at(*bias, j) : 0.0;
    for (std::int64_t p = 0; p < k; ++p)
      dot += static_cast<double>(bf16_to_f32(xs[i * k + p])) * bf16_to_f32(ws[j * k + p]);
    y[j] = dot;
  }
}

void softmax_row(double* logits, std::int64_t n, float* out) {
  double max_logit = -INFINITY;
  for (std::int64_t j = 0; j < n; ++j) max_logit = std::max(max_logit, logits[j]);
  double total = 0;
  for (std::int64_t j = 0; j < n; ++j) total += (logits[j] = std::exp(logits[j] - max_logit));
  for (std::int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(logits[j] / total);
}

ops::ScratchMatrix gemm_f32(const kb_tensor* in, const Shape& shape, WeightLayout layout,
                            const ops::Epilogue& epilogue) {
  ops::ScratchMatrix y(KB_F32, shape.m, shape.n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]),
            /*b_transposed=*/layout == WeightLayout::kOutIn, y.out(), epilogue);
  return y;
}

void softmax_baseline(const kb_tensor* in, const Shape& shape, WeightLayout layout,
                      ops::Activation activation, kb_tensor& out) {
  const ops::F32Buffer bias = ops::load_f32(in[2]);
  ops::ScratchMatrix logits =
      gemm_f32(in, shape, layout, {.bias = bias.data(), .activation = activation});
  finish_rows(logits, shape, out, [](float* row, std::size_t cols) { ops::softmax(row, cols); });
}

ops::ScratchMatrix gemm_bf16(const kb_tensor* in, const Shape& shape, WeightLayout layout) {
  ops::ScratchMatrix product(KB_BF16, shape.m, shape.n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]),
            /*b_transposed=*/layout == WeightLayout::kOutIn, product.out());
  return product;
}

}  // namespace kbench::gemm_rows
