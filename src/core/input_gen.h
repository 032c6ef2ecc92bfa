// Workload inputs drawn from (seed, input index) with Philox, so every run and machine sees the
// same values for the same seed, whatever the thread count.
#pragma once

#include <cstdint>
#include <optional>

#include "kbench/kernel.h"

namespace kbench {

// How an input is initialized, mirroring the spec's `init` column.
struct InitRule {
  // Structured values a distribution cannot express (page tables, sequence lengths, group sizes):
  // a function of (seed, stream) only, like every other rule, so a seed still fixes the inputs.
  using CustomFill = void (*)(std::uint64_t seed, std::uint32_t stream, kb_tensor& t);

  enum class Kind { kNormal, kUniform, kRandInt, kCustom };
  Kind kind = Kind::kNormal;
  double scale = 1.0;  // normal: standard deviation; uniform: width of [shift, shift + scale)
  double shift = 0.0;  // normal: mean; uniform: lower bound
  std::int64_t int_high = 0;    // randint: values in [0, int_high)
  CustomFill custom = nullptr;  // kCustom: writes every element of the tensor

  static InitRule normal(double stddev = 1.0, double mean = 0.0) {
    return {Kind::kNormal, stddev, mean, 0};
  }
  static InitRule uniform(double lo, double hi) { return {Kind::kUniform, hi - lo, lo, 0}; }
  static InitRule randint(std::int64_t high) { return {Kind::kRandInt, 1.0, 0.0, high}; }
  // Every element equal to `value` (rounded to the tensor's dtype): a uniform of width zero.
  static InitRule constant(double value) { return {Kind::kUniform, 0.0, value, 0}; }
  static InitRule structured(CustomFill fill) { return {Kind::kCustom, 1.0, 0.0, 0, fill}; }
};

// The value a kernel that skipped an input drawn by `rule` would use in its place: a normal's mean,
// a uniform's midpoint. None for a constant (skipping it changes nothing), random integers and
// structured fills (indices, lengths, page tables), whose every value matters to the program's
// structure rather than to a sum.
std::optional<double> typical_value(const InitRule& rule);

// Fills `t` (any dtype; floats are rounded to bf16 where t is bf16) with values drawn by `rule`
// from the Philox stream (seed, stream). Element i depends only on (seed, stream, i), not on the
// thread count or the vector ISA. Throws std::invalid_argument for a randint into an i32 tensor
// whose bound is outside [0, 2^31]; normal and uniform values written to i32 are truncated and
// must fit it.
void fill_input(const InitRule& rule, std::uint64_t seed, std::uint32_t stream, kb_tensor& t);

}  // namespace kbench
