// Philox4x32-10 (Salmon et al., SC'11): a counter-based RNG, so element i of an input depends only
// on (seed, stream, i) and inputs are bit-identical across runs, machines and thread counts.
// Inline: the scalar input generator calls it once per four values; the vector generator
// (input_gen_simd.cc) runs the same rounds on several blocks per vector with these constants.
#pragma once

#include <array>
#include <cstdint>

namespace kbench {

using PhiloxBlock = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

// The multipliers and Weyl constants of the original paper.
inline constexpr int kPhiloxRounds = 10;
inline constexpr std::uint32_t kPhiloxMul0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxMul1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxWeyl0 = 0x9E3779B9u;  // golden ratio
inline constexpr std::uint32_t kPhiloxWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

// Ten rounds of the Philox4x32 bijection of `counter` under `key`.
inline PhiloxBlock philox4x32_10(PhiloxBlock c, PhiloxKey k) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      k[0] += kPhiloxWeyl0;
      k[1] += kPhiloxWeyl1;
    }
    const std::uint64_t p0 = std::uint64_t{kPhiloxMul0} * c[0];
    const std::uint64_t p1 = std::uint64_t{kPhiloxMul1} * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
  }
  return c;
}

// The key of input seed `seed` and the counter of block `block` of stream `stream`: element
// 4 * block + w of an input takes word w of that block's output.
inline PhiloxKey philox_key(std::uint64_t seed) {
  return {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
}
inline PhiloxBlock philox_counter(std::uint64_t block, std::uint32_t stream) {
  return {static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), stream, 0u};
}

}  // namespace kbench
