// Shared checks, reference and bf16-program driver of the linear + epilogue workloads.
#include "workloads/linear_epilogue.h"

#include <cstring>

#include "workloads/gemm.h"
#include "workloads/matmul_ops.h"

namespace kbench::linear_epilogue {
namespace {

template <class T>
Vectors<T> vectors_of(const kb_tensor* in, std::int32_t num_inputs) {
  Vectors<T> v;
  for (std::int32_t i = 2; i < num_inputs; ++i) {
    const auto* data = static_cast<const bf16_t*>(in[i].data);
    std::vector<T>& values = v.emplace_back(static_cast<std::size_t>(in[i].shape[0]));
    for (std::size_t j = 0; j < values.size(); ++j) values[j] = bf16_to_f32(data[j]);
  }
  return v;
}

}  // namespace

std::optional<LinearShape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                         const kb_tensor* out, std::int32_t num_outputs,
                                         std::initializer_list<Extent> vectors) {
  if (num_inputs != 2 + static_cast<std::int32_t>(vectors.size()) || num_outputs != 1)
    return std::nullopt;
  if (in[0].rank != 2 || in[1].rank != 2) return std::nullopt;
  const LinearShape shape{in[0].shape[0], in[0].shape[1], in[1].shape[1]};
  const auto [m, k, n] = shape;
  if (!ops::matches(in[0], KB_BF16, {m, k}) || !ops::matches(in[1], KB_BF16, {k, n}) ||
      !ops::is_float_output(out[0], {m, n})) {
    return std::nullopt;
  }
  const kb_tensor* vector = in + 2;
  for (const Extent extent : vectors)
    if (!ops::matches(*vector++, KB_BF16, {extent == Extent::kColumns ? n : 1}))
      return std::nullopt;
  return shape;
}

int reference(const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
              std::int32_t num_outputs, std::initializer_list<Extent> vectors,
              double (*epilogue)(double y, std::int64_t j, const Vectors<double>& v)) {
  const std::optional<LinearShape> shape = shape_of_call(in, num_inputs, out, num_outputs, vectors);
  if (!shape || out[0].dtype != KB_F32) return 1;
  const auto [m, k, n] = *shape;
  const auto* x = static_cast<const bf16_t*>(in[0].data);
  const auto* weight = static_cast<const bf16_t*>(in[1].data);
  const Vectors<double> v = vectors_of<double>(in, num_inputs);
  auto* y = static_cast<float*>(out[0].data);
  // i-p-j order with a double row accumulator: the textbook sums, reading weight along its rows.
  std::vector<double> y_row(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    y_row.assign(y_row.size(), 0.0);
    for (std::int64_t p = 0; p < k; ++p) {
      const double x_ip = bf16_to_f32(x[i * k + p]);
      for (std::int64_t j = 0; j < n; ++j) y_row[j] += x_ip * bf16_to_f32(weight[p * n + j]);
    }
    for (std::int64_t j = 0; j < n; ++j)
      y[i * n + j] = static_cast<float>(epilogue(y_row[j], j, v));
  }
  return 0;
}

int bf16_program(const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
                 std::int32_t num_outputs, std::initializer_list<Extent> vectors,
                 float (*ops)(float y, std::int64_t j, const Vectors<float>& v)) {
  const std::optional<LinearShape> shape = shape_of_call(in, num_inputs, out, num_outputs, vectors);
  if (!shape) return 1;
  const auto [m, k, n] = *shape;
  ops::ScratchMatrix y(KB_BF16, m, n);
  ops::gemm(ops::matrix_of(in[0]), ops::matrix_of(in[1]), /*b_transposed=*/false, y.out());
  const Vectors<float> v = vectors_of<float>(in, num_inputs);
  for (std::int64_t i = 0; i < m; ++i) {
    const auto* y_row = static_cast<const bf16_t*>(y.row(i));
    for (std::int64_t j = 0; j < n; ++j) {
      const float value = ops(bf16_to_f32(y_row[j]), j, v);
      if (out[0].dtype == KB_BF16)
        static_cast<bf16_t*>(out[0].data)[i * n + j] = f32_to_bf16(value);
      else
        static_cast<float*>(out[0].data)[i * n + j] = value;
    }
  }
  return 0;
}

}  // namespace kbench::linear_epilogue
