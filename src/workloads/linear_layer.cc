// The linear layer of the GEMM-then-reduce workloads: tensor checks, the double reference and the
// bf16 emulation (through ops::gemm with a bf16 or f32 result, so it runs fast at cpu size).
#include "workloads/linear_layer.h"

#include "core/bf16.h"
#include "workloads/gemm.h"
#include "workloads/matmul_ops.h"
#include "workloads/ops.h"

namespace kbench::linear {

std::optional<Shape> shape_of(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                              const kb_tensor* bias) {
  if (x.rank != 2 || weight.rank != 2) return std::nullopt;
  const bool in_out = layout == WeightLayout::kInOut;
  const Shape shape{x.shape[0], x.shape[1], in_out ? weight.shape[1] : weight.shape[0]};
  const bool ok = ops::matches(x, KB_BF16, {shape.m, shape.k}) &&
                  (in_out ? ops::matches(weight, KB_BF16, {shape.k, shape.n})
                          : ops::matches(weight, KB_BF16, {shape.n, shape.k})) &&
                  (bias == nullptr || ops::matches(*bias, KB_BF16, {shape.n}));
  if (!ok) return std::nullopt;
  return shape;
}

std::vector<double> reference(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                              const kb_tensor* bias) {
  const std::int64_t m = x.shape[0], k = x.shape[1];
  const bool in_out = layout == WeightLayout::kInOut;
  const std::int64_t n = in_out ? weight.shape[1] : weight.shape[0];
  const auto* xs = static_cast<const bf16_t*>(x.data);
  const auto* ws = static_cast<const bf16_t*>(weight.data);
  std::vector<double> y(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    double* y_row = y.data() + i * n;
    if (bias != nullptr)
      for (std::int64_t j = 0; j < n; ++j)
        y_row[j] = bf16_to_f32(static_cast<const bf16_t*>(bias->data)[j]);
    if (in_out) {
      // i-p-j order: the weight is read along its rows.
      for (std::int64_t p = 0; p < k; ++p) {
        const double x_ip = bf16_to_f32(xs[i * k + p]);
        for (std::int64_t j = 0; j < n; ++j) y_row[j] += x_ip * bf16_to_f32(ws[p * n + j]);
      }
    } else {
      for (std::int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::int64_t p = 0; p < k; ++p)
          dot += static_cast<double>(bf16_to_f32(xs[i * k + p])) * bf16_to_f32(ws[j * k + p]);
        y_row[j] += dot;
      }
    }
  }
  return y;
}

std::vector<float> bf16_program(const kb_tensor& x, const kb_tensor& weight, WeightLayout layout,
                                const kb_tensor* bias, bool round_product) {
  const ops::Matrix a = ops::matrix_of(x);
  const ops::Matrix b = ops::matrix_of(weight);
  const bool transposed = layout == WeightLayout::kOutIn;
  const std::int64_t m = a.rows, n = transposed ? b.rows : b.cols;
  std::vector<float> y(static_cast<std::size_t>(m * n));
  if (round_product) {
    ops::ScratchMatrix product(KB_BF16, m, n);
    ops::gemm(a, b, transposed, product.out());
    convert_bf16_to_f32(static_cast<const bf16_t*>(product.in().data), y.data(), y.size());
  } else {
    ops::gemm(a, b, transposed, {y.data(), KB_F32, m, n, n});
  }
  if (bias != nullptr) {
    const auto* bs = static_cast<const bf16_t*>(bias->data);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float& v = y[static_cast<std::size_t>(i * n + j)];
        v = v + bf16_to_f32(bs[j]);
        if (round_product) v = round_to_bf16(v);
      }
  }
  return y;
}

void store(kb_tensor& t, std::int64_t i, float v) {
  if (t.dtype == KB_BF16)
    static_cast<bf16_t*>(t.data)[i] = f32_to_bf16(v);
  else
    static_cast<float*>(t.data)[i] = v;
}

}  // namespace kbench::linear
