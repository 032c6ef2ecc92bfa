// Philox4x32-10 (Salmon et al., SC'11): a counter-based RNG, so element i of an input depends only
// on (seed, stream, i) and inputs are bit-identical across runs, machines and thread counts.
// Inline: input generation calls it once per four values, before every timed call.
#pragma once

#include <array>
#include <cstdint>

namespace kbench {

using PhiloxBlock = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

// Ten rounds of the Philox4x32 bijection of `counter` under `key`, with the multipliers and Weyl
// constants of the original paper.
inline PhiloxBlock philox4x32_10(PhiloxBlock c, PhiloxKey k) {
  constexpr std::uint32_t kMul0 = 0xD2511F53u;
  constexpr std::uint32_t kMul1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
  constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    const std::uint64_t p0 = std::uint64_t{kMul0} * c[0];
    const std::uint64_t p1 = std::uint64_t{kMul1} * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
  }
  return c;
}

}  // namespace kbench
