// The library paths behind ops::gemm, one file each; internal to the GEMM block.
#pragma once

#include <cstdint>
#include <functional>

#include "ops/buffers.h"
#include "ops/gemm.h"

namespace kbench::ops::detail {

// oneDNN matmul with the epilogue as post-ops: bf16 operands as they are (`bf16`), or widened to
// f32 first. False when oneDNN cannot create the primitive on this CPU.
bool onednn_gemm(bool bf16, const Matrix& a, const Matrix& b, bool b_transposed,
                 const MutableMatrix& c, const Epilogue& epilogue);

// Widen to f32, OpenBLAS sgemm a block of rows at a time, then the epilogue and the store on that
// block while it is still in cache. Always works.
bool openblas_gemm(const Matrix& a, const Matrix& b, bool b_transposed, const MutableMatrix& c,
                   const Epilogue& epilogue);

// oneMKL (core/mkl_runtime.h): bf16 operands as they are (`bf16`, cblas_gemm_bf16bf16f32), or
// widened to f32 for cblas_sgemm; f32 products a block of rows at a time, the epilogue on each
// block while it is in cache. False when MKL is not loaded, or `bf16` with an f32 operand.
bool mkl_gemm(bool bf16, const Matrix& a, const Matrix& b, bool b_transposed,
              const MutableMatrix& c, const Epilogue& epilogue);

// C's rows in blocks sized for the cache: `block_product` writes rows [row0, row0 + rows) of the
// f32 product into `product` (row stride C.cols), then the epilogue and the store run on the block.
void in_row_blocks(
    const MutableMatrix& c, const Epilogue& epilogue,
    const std::function<void(std::int64_t row0, std::int64_t rows, float* product)>& block_product);

// The epilogue on `rows` x `cols` f32 values (row stride `ld`) whose first row is row `row0` of C,
// then the store into C's dtype. Shared by every path that does not fuse natively.
void apply_epilogue_and_store(float* values, std::int64_t ld, std::int64_t row0, std::int64_t rows,
                              const Epilogue& epilogue, const MutableMatrix& c);

// The f32 values of a bf16 or f32 matrix, packed densely (ld = cols), for the paths that widen.
F32Buffer widen(const Matrix& m);

// Threads the calling kernel may use (the OpenMP budget the worker set).
int gemm_threads();

// The passes around a library call (widening, epilogue, rounding) run across the thread budget
// from this many elements on; below it a parallel region's start costs more than it saves.
inline constexpr std::int64_t kParallelElements = 1 << 16;

}  // namespace kbench::ops::detail
