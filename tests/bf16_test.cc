// The f32 -> bf16 rounding rules of the ABI header (nearest-even, quiet NaN, Inf kept) and the
// array conversions' agreement with them, bit for bit.
#include "core/bf16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kbench {
namespace {

std::uint16_t round_bits(std::uint32_t f32_bits) {
  return kb_f32_to_bf16(std::bit_cast<float>(f32_bits));
}

bool is_bf16_nan(std::uint16_t h) {
  return (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) != 0;
}
bool is_bf16_quiet(std::uint16_t h) {
  return (h & 0x0040u) != 0;
}

TEST(Bf16Scalar, ExactValuesPassThrough) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_bf16(3.0f), 0x4040);
  EXPECT_EQ(f32_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_bf16(0.15625f), 0x3E20);
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xC0A0), -5.0f);
}

TEST(Bf16Scalar, RoundsToNearestEvenOnTies) {
  EXPECT_EQ(round_bits(0x3F808000u), 0x3F80);  // tie, even neighbour below: stays
  EXPECT_EQ(round_bits(0x3F818000u), 0x3F82);  // tie, odd: goes up to the even neighbour
  EXPECT_EQ(round_bits(0xBF808000u), 0xBF80);  // sign does not change the rule
  EXPECT_EQ(round_bits(0xBF818000u), 0xBF82);
  EXPECT_EQ(round_bits(0x3F808001u), 0x3F81);  // just above half: up
  EXPECT_EQ(round_bits(0x3F807FFFu), 0x3F80);  // just below half: down
  EXPECT_EQ(round_bits(0x3F80FFFFu), 0x3F81);
}

TEST(Bf16Scalar, RoundingCarriesIntoTheExponent) {
  EXPECT_EQ(round_bits(0x3FFF8000u), 0x4000);  // 1.99609375: tie, odd 0x3FFF goes up to 2.0
  EXPECT_EQ(round_bits(0x3FFFFFFFu), 0x4000);
  EXPECT_EQ(round_bits(0x7F7F7FFFu), 0x7F7F);  // stays the largest finite bf16
  EXPECT_EQ(round_bits(0x7F7FFFFFu), 0x7F80);  // FLT_MAX is past bf16's max: rounds to +Inf
  EXPECT_EQ(round_bits(0xFF7FFFFFu), 0xFF80);  // and -FLT_MAX to -Inf
}

TEST(Bf16Scalar, InfinitiesAndSignedZeroPreserved) {
  EXPECT_EQ(round_bits(0x7F800000u), 0x7F80);
  EXPECT_EQ(round_bits(0xFF800000u), 0xFF80);
  EXPECT_EQ(round_bits(0x80000000u), 0x8000);
  EXPECT_TRUE(std::signbit(bf16_to_f32(f32_to_bf16(-0.0f))));
}

TEST(Bf16Scalar, NanStaysQuietNan) {
  for (std::uint32_t bits : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7F810000u,
                             0x7FBFFFFFu, 0x7F80FFFFu, 0x7FFFFFFFu}) {
    const std::uint16_t h = round_bits(bits);
    EXPECT_TRUE(is_bf16_nan(h)) << std::hex << bits << " -> " << h;
    EXPECT_TRUE(is_bf16_quiet(h)) << std::hex << bits << " -> " << h;
    EXPECT_EQ(h & 0x8000u, (bits >> 16) & 0x8000u) << "sign of " << std::hex << bits;
  }
  // Payload only in the low 16 bits: truncation alone would give 0x7F80, an infinity.
  EXPECT_EQ(round_bits(0x7F800001u), 0x7FC0);
}

TEST(Bf16Scalar, Denormals) {
  EXPECT_EQ(round_bits(0x00000001u), 0x0000);  // smallest f32 denormal rounds to +0
  EXPECT_EQ(round_bits(0x80000001u), 0x8000);  // and keeps its sign
  EXPECT_EQ(round_bits(0x00010000u), 0x0001);  // smallest bf16 denormal is exact
  EXPECT_EQ(round_bits(0x00008000u), 0x0000);  // tie between 0 and the smallest denormal: even (0)
  EXPECT_EQ(round_bits(0x00018000u), 0x0002);  // tie, odd: up
  EXPECT_EQ(round_bits(0x007FFFFFu), 0x0080);  // largest f32 denormal rounds up to FLT_MIN
  EXPECT_EQ(round_bits(0x807FFFFFu), 0x8080);
  EXPECT_EQ(bf16_to_f32(0x0001), std::bit_cast<float>(0x00010000u));
}

TEST(Bf16Array, WideningMatchesScalarForAllPatterns) {
  std::vector<bf16_t> src(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) src[i] = static_cast<bf16_t>(i);
  std::vector<float> dst(src.size());
  convert_bf16_to_f32(src.data(), dst.data(), src.size());
  for (std::uint32_t i = 0; i < 65536; ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(dst[i]), i << 16) << "bf16 " << std::hex << i;
}

TEST(Bf16Array, NarrowingMatchesScalarBitForBit) {
  // Random bit patterns cover NaNs, denormals and ties in proportion; the specials are appended so
  // every edge case is hit however the vectorized loop splits its body and tail. An odd count
  // exercises the tail.
  std::mt19937 rng(2024);
  std::vector<std::uint32_t> bits(100003);
  for (auto& b : bits) b = rng();
  for (std::uint32_t special : {0x3F808000u, 0x3F818000u, 0x7F7FFFFFu, 0x7F800000u, 0xFF800000u,
                                0x7F800001u, 0xFFC00001u, 0x80000000u, 0x00008000u, 0x007FFFFFu})
    bits.push_back(special);
  std::vector<float> src(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) src[i] = std::bit_cast<float>(bits[i]);
  std::vector<bf16_t> dst(src.size());
  convert_f32_to_bf16(src.data(), dst.data(), src.size());
  for (std::size_t i = 0; i < src.size(); ++i)
    ASSERT_EQ(dst[i], kb_f32_to_bf16(src[i])) << "f32 bits " << std::hex << bits[i];
}

}  // namespace
}  // namespace kbench
