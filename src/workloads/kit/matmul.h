// The matmul pieces that the dense production workloads (8p, 9p, 10p, 11p, 13p, 14p) and 41k
// write alike: the double-precision rows of their references, the SwiGLU block of 9p and 10p in
// the references' and in the original programs' arithmetic, and the store of a bf16 product.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/bf16.h"
#include "kbench/kernel.h"
#include "ops/gemm.h"

namespace kbench::matmul {

// y[j] += a * w[j] for j < n, in double.
inline void add_scaled_row(double a, const bf16_t* w, std::int64_t n, double* y) {
  for (std::int64_t j = 0; j < n; ++j) y[j] += a * bf16_to_f32(w[j]);
}

// y[j] += x[p] * w[p, j] for p ascending, w a bf16 (k, n) matrix: the references' i-p-j order,
// the same sums as the textbook i-j-p loop but reading w along its rows, so a reference stays
// usable beyond the smoke size. y keeps whatever it starts from (zeros, or a bias).
inline void add_product_row(const bf16_t* x, const bf16_t* w, std::int64_t k, std::int64_t n,
                            double* y) {
  for (std::int64_t p = 0; p < k; ++p) add_scaled_row(bf16_to_f32(x[p]), w + p * n, n, y);
}

// y = x @ w for bf16 x (rows, k) and w (k, n), each row summed in double (add_product_row) and
// stored as f32.
void reference_product(const bf16_t* x, const bf16_t* w, std::int64_t rows, std::int64_t k,
                       std::int64_t n, float* y);

// Rows [start, start + rows) of out = the same rows of lhs (in[0], bf16 (M, K)) @ in[1][g] (bf16
// (G, K, N)): one library GEMM, its f32 product rounded once into out's dtype. A grouped matmul
// (11p, 14p) is one call per group.
void group_gemm(const kb_tensor* in, kb_tensor& out, std::int64_t g, std::int64_t start,
                std::int64_t rows, std::int64_t k, std::int64_t n);

// The `count` values of a bf16 result stored in out's dtype (widened exactly for f32).
void store_bf16(const bf16_t* result, std::int64_t count, kb_tensor& out);

// y_row += scale(silu(g) * u) @ wd for the token x_row, in double: g = x_row @ wg and u = x_row @
// wu (emb -> mlp, summed by add_product_row into gate and up, mlp entries each), silu(g) = g / (1 +
// exp(-g)), wd a bf16 (mlp, emb) matrix read along its rows.
template <class Scale>
void swiglu_reference_row(const bf16_t* x_row, const bf16_t* wg, const bf16_t* wu, const bf16_t* wd,
                          std::int64_t emb, std::int64_t mlp, std::vector<double>& gate,
                          std::vector<double>& up, double* y_row, Scale scale) {
  gate.assign(gate.size(), 0.0);
  up.assign(up.size(), 0.0);
  add_product_row(x_row, wg, emb, mlp, gate.data());
  add_product_row(x_row, wu, emb, mlp, up.data());
  for (std::int64_t j = 0; j < mlp; ++j) {
    const double hidden = scale(gate[j] / (1.0 + std::exp(-gate[j])) * up[j]);
    add_scaled_row(hidden, wd + j * emb, emb, y_row);
  }
}

// jax.nn.silu(gate) * up on bf16 tensors: the sigmoid, its product with gate and the product
// with up each rounded to bf16.
inline bf16_t swiglu_bf16(bf16_t gate, bf16_t up) {
  const float g = bf16_to_f32(gate);
  const float sigmoid = round_to_bf16(1.0f / (1.0f + std::exp(-g)));
  const float silu = round_to_bf16(g * sigmoid);
  return f32_to_bf16(silu * bf16_to_f32(up));
}

// The original SwiGLU's arithmetic on bf16 tensors: gate = bf16(x @ wg), hidden = bf16(x @ wu)
// then swiglu_bf16(gate, hidden) in place, y = bf16(hidden @ wd). gate and hidden are the caller's
// bf16 (x.rows, wg.cols) scratch, contiguous.
void swiglu_bf16(const ops::Matrix& x, const ops::Matrix& wg, const ops::Matrix& wu,
                 const ops::Matrix& wd, ops::MutableMatrix gate, ops::MutableMatrix hidden,
                 ops::MutableMatrix y);

// What a fusing compiler emits for the SwiGLU: the gate GEMM with SiLU fused into its epilogue,
// the up GEMM with the product by silu(gate) fused into its epilogue (into hidden), then the down
// GEMM into y. gate and hidden are the caller's scratch in the activations' dtype.
void swiglu_fused(const ops::Matrix& x, const ops::Matrix& wg, const ops::Matrix& wu,
                  const ops::Matrix& wd, ops::ScratchMatrix& gate, ops::ScratchMatrix& hidden,
                  ops::MutableMatrix y);

}  // namespace kbench::matmul
