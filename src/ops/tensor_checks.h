// The tensor checks every matmul-shaped kb_run entry point (8p GEMM, 9p SwiGLU MLP, 41k
// Gemm+Add+ReLU) starts with.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "kbench/kernel.h"

namespace kbench::ops {

// True when `t` has dtype `dtype` and exactly the extents `shape` (which fixes its rank too).
bool matches(const kb_tensor& t, kb_dtype dtype, std::initializer_list<std::int64_t> shape);

// True when `t` can receive a baseline's result of extents `shape`: bf16 (the timed run) or f32
// (the oracle).
bool is_float_output(const kb_tensor& t, std::initializer_list<std::int64_t> shape);

}  // namespace kbench::ops
