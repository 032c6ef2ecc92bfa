// expect: correct on 8p_GEMM
// An 8p_GEMM candidate on oneMKL's bf16 GEMM: proves that a candidate including <mkl_cblas.h>
// compiles and links libmkl_rt under kbench's fixed candidate command, and that in the sandboxed
// worker MKL's own entry point (cblas_gemm_bf16bf16f32, which OpenBLAS lacks) reaches MKL and runs
// correctly. Skipped where the build found no MKL.
#include <mkl_cblas.h>

#include <cstdint>
#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& a = inputs[0];
  const kb_tensor& b = inputs[1];
  kb_tensor& out = outputs[0];
  if (a.rank != 2 || b.rank != 2 || a.shape[1] != b.shape[0]) return 1;
  const MKL_INT m = static_cast<MKL_INT>(a.shape[0]), k = static_cast<MKL_INT>(a.shape[1]),
                n = static_cast<MKL_INT>(b.shape[1]);
  std::vector<float> c32(static_cast<size_t>(m) * static_cast<size_t>(n));
  cblas_gemm_bf16bf16f32(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                         static_cast<const MKL_BF16*>(a.data), k,
                         static_cast<const MKL_BF16*>(b.data), n, 0.0f, c32.data(), n);
  auto* c = static_cast<uint16_t*>(out.data);
  for (size_t i = 0; i < c32.size(); ++i) c[i] = kb_f32_to_bf16(c32[i]);
  return 0;
}
