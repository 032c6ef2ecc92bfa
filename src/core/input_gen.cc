// Philox-driven input generation: Box-Muller normals, uniform floats and bounded integers.
#include "core/input_gen.h"

#include <cmath>
#include <numbers>

#include "core/bf16.h"
#include "core/philox.h"

namespace kbench {
namespace {

// Maps 32 random bits to (0, 1): never 0, so log() in Box-Muller stays finite.
inline double open_unit(std::uint32_t bits) { return (bits + 0.5) * 0x1p-32; }

// Four values from one Philox block (element indices 4*block .. 4*block+3).
inline void draw4(const InitRule& rule, std::uint64_t seed, std::uint32_t stream, std::uint64_t block,
                  double out[4]) {
  const PhiloxBlock bits = philox4x32_10(
      {static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), stream, 0u},
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
  switch (rule.kind) {
    case InitRule::Kind::kNormal:
      for (int pair = 0; pair < 2; ++pair) {
        const double radius = std::sqrt(-2.0 * std::log(open_unit(bits[2 * pair])));
        const double angle = 2.0 * std::numbers::pi * open_unit(bits[2 * pair + 1]);
        out[2 * pair] = rule.shift + rule.scale * radius * std::cos(angle);
        out[2 * pair + 1] = rule.shift + rule.scale * radius * std::sin(angle);
      }
      break;
    case InitRule::Kind::kUniform:
      for (int i = 0; i < 4; ++i) out[i] = rule.shift + rule.scale * (bits[i] * 0x1p-32);
      break;
    case InitRule::Kind::kRandInt:
      for (int i = 0; i < 4; ++i)
        out[i] = static_cast<double>((std::uint64_t{bits[i]} * static_cast<std::uint64_t>(rule.int_high)) >> 32);
      break;
  }
}

}  // namespace

void fill_input(const InitRule& rule, std::uint64_t seed, std::uint32_t stream, kb_tensor& t) {
  const std::int64_t n = kb_numel(&t);
  const std::int64_t blocks = (n + 3) / 4;
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    double v[4];
    draw4(rule, seed, stream, static_cast<std::uint64_t>(b), v);
    for (std::int64_t j = 0; j < 4 && 4 * b + j < n; ++j) {
      const std::int64_t i = 4 * b + j;
      switch (t.dtype) {
        case KB_BF16:
          static_cast<bf16_t*>(t.data)[i] = f32_to_bf16(static_cast<float>(v[j]));
          break;
        case KB_F32:
          static_cast<float*>(t.data)[i] = static_cast<float>(v[j]);
          break;
        case KB_I32:
          static_cast<std::int32_t*>(t.data)[i] = static_cast<std::int32_t>(v[j]);
          break;
      }
    }
  }
}

}  // namespace kbench
