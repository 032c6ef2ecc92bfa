// The oneMKL paths: MKL's bf16 GEMM on the operands as stored, or its sgemm on widened operands,
// each a block of rows at a time with the shared epilogue on the block.
#include <cstdint>

#include "core/mkl_runtime.h"
#include "ops/gemm_paths.h"

namespace kbench::ops::detail {

bool mkl_gemm(bool bf16, const Matrix& a, const Matrix& b, bool b_transposed,
              const MutableMatrix& c, const Epilogue& epilogue) {
  const mkl::Runtime* mkl = mkl::runtime();
  if (!mkl) return false;
  const std::int64_t n = c.cols, k = a.cols;
  const int threads = gemm_threads();
  if (bf16) {
    if (a.dtype != KB_BF16 || b.dtype != KB_BF16) return false;
    const auto* a16 = static_cast<const std::uint16_t*>(a.data);
    const auto* b16 = static_cast<const std::uint16_t*>(b.data);
    in_row_blocks(c, epilogue, [&](std::int64_t row0, std::int64_t rows, float* product) {
      mkl->gemm_bf16(b_transposed, rows, n, k, a16 + row0 * a.ld, a.ld, b16, b.ld, product, n,
                     threads);
    });
    return true;
  }
  const F32Buffer a32 = widen(a);
  const F32Buffer b32 = widen(b);
  in_row_blocks(c, epilogue, [&](std::int64_t row0, std::int64_t rows, float* product) {
    mkl->sgemm(b_transposed, rows, n, k, a32.data() + row0 * k, k, b32.data(), b_transposed ? k : n,
               product, n, threads);
  });
  return true;
}

}  // namespace kbench::ops::detail
