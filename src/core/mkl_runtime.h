// The process's handle on oneMKL, loaded at run time. kbench does not link MKL: libmkl_rt defines
// the same cblas_* names as OpenBLAS, so it is opened with RTLD_LOCAL and its entry points are
// called through this handle, leaving every other cblas_* reference on OpenBLAS. Installed by
// scripts/install-mkl.sh; a build or machine without it runs every GEMM on the other paths.
#pragma once

#include <cstdint>
#include <string>

namespace kbench::mkl {

// Row-major C[M,N] = A[M,K] @ op(B), op(B) = B[K,N] or B[N,K]^T, f32 accumulation and output; each
// call runs on `threads` OpenMP threads of the process's own runtime (MKL's GNU threading layer).
struct Runtime {
  void (*sgemm_)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                 float*, int) = nullptr;
  void (*gemm_bf16bf16f32_)(int, int, int, int, int, int, float, const std::uint16_t*, int,
                            const std::uint16_t*, int, float, float*, int) = nullptr;
  int (*set_num_threads_local_)(int) = nullptr;
  std::string version;  // "oneMKL 2026.2 ..." as MKL_Get_Version_String writes it
  std::string path;     // the libmkl_rt that was opened

  void sgemm(bool b_transposed, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
             std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
             int threads) const;
  // bf16 operands as stored (uint16 bit patterns), f32 products: MKL's own bf16 dispatch (AMX,
  // avx512_bf16, or conversion on the way into its packed panels).
  void gemm_bf16(bool b_transposed, std::int64_t m, std::int64_t n, std::int64_t k,
                 const std::uint16_t* a, std::int64_t lda, const std::uint16_t* b, std::int64_t ldb,
                 float* c, std::int64_t ldc, int threads) const;
};

// The loaded runtime, opened on first use (thread-safe); null when this build found no MKL, when
// KBENCH_MKL=off, or when loading failed. KBENCH_MKL=<path of a libmkl_rt.so> loads that one
// instead of the one the build found.
const Runtime* runtime();

// One line for people: "oneMKL 2026.2 ... (<path>)", or why there is none ("oneMKL not loaded:
// ...").
std::string status();

// The folder holding the loaded libmkl_rt ("" when none is loaded): the files MKL opens on its
// first call (its core, threading and per-ISA kernel libraries), which a sandboxed worker must be
// able to read.
std::string library_dir();

}  // namespace kbench::mkl
