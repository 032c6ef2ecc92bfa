#include "workloads/kit/matmul.h"

#include <cstddef>

namespace kbench::matmul {

void reference_product(const bf16_t* x, const bf16_t* w, std::int64_t rows, std::int64_t k,
                       std::int64_t n, float* y) {
  std::vector<double> y_row(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < rows; ++i) {
    y_row.assign(y_row.size(), 0.0);
    add_product_row(x + i * k, w, k, n, y_row.data());
    for (std::int64_t j = 0; j < n; ++j) y[i * n + j] = static_cast<float>(y_row[j]);
  }
}

void group_gemm(const kb_tensor* in, kb_tensor& out, std::int64_t g, std::int64_t start,
                std::int64_t rows, std::int64_t k, std::int64_t n) {
  const std::int64_t out_size = out.dtype == KB_F32 ? 4 : 2;
  const ops::Matrix a{static_cast<const bf16_t*>(in[0].data) + start * k, KB_BF16, rows, k, k};
  const ops::Matrix b{static_cast<const bf16_t*>(in[1].data) + g * k * n, KB_BF16, k, n, n};
  ops::gemm(a, b, /*b_transposed=*/false,
            {static_cast<char*>(out.data) + start * n * out_size, out.dtype, rows, n, n});
}

void store_bf16(const bf16_t* result, std::int64_t count, kb_tensor& out) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (out.dtype == KB_BF16)
      static_cast<bf16_t*>(out.data)[i] = result[i];
    else
      static_cast<float*>(out.data)[i] = bf16_to_f32(result[i]);
  }
}

void swiglu_bf16(const ops::Matrix& x, const ops::Matrix& wg, const ops::Matrix& wu,
                 const ops::Matrix& wd, ops::MutableMatrix gate, ops::MutableMatrix hidden,
                 ops::MutableMatrix y) {
  ops::gemm(x, wg, false, gate);
  ops::gemm(x, wu, false, hidden);
  const auto* g = static_cast<const bf16_t*>(gate.data);
  auto* h = static_cast<bf16_t*>(hidden.data);
  for (std::int64_t i = 0; i < hidden.rows * hidden.cols; ++i) h[i] = swiglu_bf16(g[i], h[i]);
  ops::gemm({hidden.data, KB_BF16, hidden.rows, hidden.cols, hidden.ld}, wd, false, y);
}

void swiglu_fused(const ops::Matrix& x, const ops::Matrix& wg, const ops::Matrix& wu,
                  const ops::Matrix& wd, ops::ScratchMatrix& gate, ops::ScratchMatrix& hidden,
                  ops::MutableMatrix y) {
  ops::gemm(x, wg, false, gate.out(), {.activation = ops::Activation::kSilu});
  ops::gemm(x, wu, false, hidden.out(), {.multiplier = gate.in()});
  ops::gemm(hidden.in(), wd, false, y);
}

}  // namespace kbench::matmul
