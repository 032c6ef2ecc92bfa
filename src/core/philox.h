// Philox4x32-10 (Salmon et al., SC'11): a counter-based RNG, so element i of an input depends only on
// (seed, stream, i) and inputs are bit-identical across runs, machines and thread counts.
#pragma once

#include <array>
#include <cstdint>

namespace kbench {

using PhiloxBlock = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

// Ten rounds of the Philox4x32 bijection of `counter` under `key`.
PhiloxBlock philox4x32_10(PhiloxBlock counter, PhiloxKey key);

}  // namespace kbench
