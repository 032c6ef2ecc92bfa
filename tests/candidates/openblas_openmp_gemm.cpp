// expect: correct on 8p_GEMM with 2 threads
// An 8p_GEMM candidate of the kind the sandbox must keep passing: an OpenMP team widens the bf16
// operands into a large static scratch buffer (zero pages of .bss, 96 MiB), then OpenBLAS's sgemm
// multiplies them on its own thread pool, and OpenMP rounds the product back to bf16. It proves
// that threads from libgomp and OpenBLAS, big static buffers and BLAS calls all work inside the
// seccomp filter, Landlock and the resource limits, with two threads granted.
#include <cblas.h>
#include <omp.h>

#include <cstdint>

#include "kbench/kernel.h"

namespace {

// Enough for 8p at the smoke and cpu sizes (A, B and C in f32); larger problems return 2.
constexpr int64_t kScratchFloats = 24 << 20;
float g_scratch[kScratchFloats];

void widen(const kb_tensor& t, float* to) {
  const auto* bits = static_cast<const uint16_t*>(t.data);
  const int64_t n = kb_numel(&t);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) to[i] = kb_bf16_to_f32(bits[i]);
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& a = inputs[0];
  const kb_tensor& b = inputs[1];
  kb_tensor& out = outputs[0];
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (m * k + k * n + m * n > kScratchFloats) return 2;
  omp_set_num_threads(cfg->num_threads);
  openblas_set_num_threads(cfg->num_threads);
  float* wa = g_scratch;
  float* wb = wa + m * k;
  float* wc = wb + k * n;
  widen(a, wa);
  widen(b, wb);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, wa, static_cast<int>(k), wb, static_cast<int>(n), 0.0f, wc,
              static_cast<int>(n));
  auto* c = static_cast<uint16_t*>(out.data);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m * n; ++i) c[i] = kb_f32_to_bf16(wc[i]);
  return 0;
}
