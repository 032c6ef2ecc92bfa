// What a GEMM's epilogue computes, by kind and in order, as a short string, and an epilogue of the
// same kinds with operands of its own: the GEMM plan measures each shape class with its epilogue,
// because oneDNN fuses the epilogue into its kernel while the MKL and OpenBLAS paths run it as a
// pass over the f32 product, and a transcendental pass can cost more than the paths' difference
// (27k's mish(mish(x W + b)) at 768x1536x1536 on the AMX Xeon: MKL 3.6 ms bare, 9.4 ms with it;
// oneDNN 5.4 and 6.0 ms).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ops/gemm.h"

namespace kbench::ops {

// "" for the bare product; else '+'-joined steps in the epilogue's order: "scale", "bias",
// "act.<activation>", "mul.bf16" / "mul.f32" (the multiplier), "post.<activation>",
// "post.linear", "post.clip", "post.leakyrelu", "post.<op>" (a scalar: add, sub, mul, div),
// "post.col.<op>" (a per-column operand), "round.bf16" (Epilogue::round_to_bf16). Never holds ';'
// or '=' (the plan's separators).
std::string epilogue_signature(const Epilogue& epilogue);

// An epilogue with the steps of `signature` for an m x n product, its operands (bias, multiplier,
// per-column values) owned and set to mild values (no step overflows or divides by zero). Throws
// std::invalid_argument when the signature is not one epilogue_signature writes.
class SampleEpilogue {
 public:
  SampleEpilogue(const std::string& signature, std::int64_t m, std::int64_t n);
  SampleEpilogue(const SampleEpilogue&) = delete;
  SampleEpilogue& operator=(const SampleEpilogue&) = delete;
  ~SampleEpilogue();
  const Epilogue& epilogue() const { return epilogue_; }

 private:
  struct Operands;
  std::unique_ptr<Operands> operands_;
  Epilogue epilogue_;
};

}  // namespace kbench::ops
