// Philox4x32-10 against the Random123 known answers, the reproducibility and distributions of the
// workload inputs drawn from it, and every compiled vector path of the generator against the
// scalar reference, byte for byte.
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "core/input_gen.h"
#include "core/input_gen_internal.h"
#include "core/philox.h"
#include "core/sha256.h"
#include "core/tensor.h"

namespace kbench {
namespace {

// The "philox4x32 10" lines of tests/kat_vectors in the Random123 distribution (D. E. Shaw
// Research): counter words, key words, expected output words.
TEST(Philox, Random123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(
      philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

HostTensor filled(const InitRule& rule, kb_dtype dtype, std::int64_t n, std::uint64_t seed,
                  std::uint32_t stream = 0) {
  HostTensor t(TensorSpec{"x", dtype, {n}});
  kb_tensor view = t.view();
  fill_input(rule, seed, stream, view);
  return t;
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
  return a.spec().bytes() == b.spec().bytes() &&
         std::memcmp(a.data(), b.data(), a.spec().bytes()) == 0;
}

// What a kernel that skips an input would put in its place (harness/suite_checks.h): the
// distribution's centre, and nothing for inputs whose values are structure or already constant.
TEST(TypicalValue, IsTheCentreOfARandomFloatDrawAndNothingElse) {
  EXPECT_EQ(typical_value(InitRule::normal(0.02, 0.5)), 0.5);
  EXPECT_EQ(typical_value(InitRule::normal()), 0.0);
  EXPECT_EQ(typical_value(InitRule::uniform(0.5, 1.5)), 1.0);
  EXPECT_EQ(typical_value(InitRule::constant(1.0)), std::nullopt);
  EXPECT_EQ(typical_value(InitRule::randint(7)), std::nullopt);
  EXPECT_EQ(typical_value(InitRule::structured([](std::uint64_t, std::uint32_t, kb_tensor&) {})),
            std::nullopt);
}

TEST(FillInput, SameSeedSameBytesOtherwiseDifferent) {
  for (kb_dtype dtype : {KB_F32, KB_BF16}) {
    const auto a = filled(InitRule::normal(), dtype, 10001, 123);
    EXPECT_TRUE(same_bytes(a, filled(InitRule::normal(), dtype, 10001, 123)));
    EXPECT_FALSE(same_bytes(a, filled(InitRule::normal(), dtype, 10001, 124)));
    EXPECT_FALSE(same_bytes(a, filled(InitRule::normal(), dtype, 10001, 123, /*stream=*/1)));
  }
  const auto ints = filled(InitRule::randint(1000), KB_I32, 10001, 5);
  EXPECT_TRUE(same_bytes(ints, filled(InitRule::randint(1000), KB_I32, 10001, 5)));
  EXPECT_FALSE(same_bytes(ints, filled(InitRule::randint(1000), KB_I32, 10001, 6)));
}

// The tiles are split over the CPUs the process may use: pinned to one CPU, one thread fills them.
TEST(FillInput, IndependentOfThreadCount) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const auto all = filled(InitRule::normal(), KB_F32, 100003, 77);
  const auto all_bf16 = filled(InitRule::uniform(-1, 1), KB_BF16, 100003, 77);
  cpu_set_t one_cpu;
  CPU_ZERO(&one_cpu);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &saved)) {
      CPU_SET(cpu, &one_cpu);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one_cpu, &one_cpu), 0);
  const auto one = filled(InitRule::normal(), KB_F32, 100003, 77);
  const auto one_bf16 = filled(InitRule::uniform(-1, 1), KB_BF16, 100003, 77);
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  EXPECT_TRUE(same_bytes(one, all));
  EXPECT_TRUE(same_bytes(one_bf16, all_bf16));
}

// The state letter (R running, S sleeping, ...) of each of this process's threads but the caller.
std::map<std::string, char> other_thread_states() {
  std::map<std::string, char> states;
  const std::string self = std::to_string(gettid());
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    const std::string tid = task.path().filename();
    if (tid == self) continue;
    std::ifstream stat(task.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const std::size_t after_name = line.rfind(')');
    if (after_name != std::string::npos && after_name + 2 < line.size())
      states[tid] = line[after_name + 2];
  }
  return states;
}

// Inputs are drawn right before every timed call: a thread the draw leaves behind, or wakes and
// leaves running (an OpenMP team spinning for its next region), would take a CPU from a worker
// timed on all of them. Threads already running before the draw (a library's own start-up) are
// not the draw's doing.
TEST(FillInput, LeavesNoThreadRunning) {
  cpu_set_t cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  if (CPU_COUNT(&cpus) < 2) GTEST_SKIP() << "one CPU: nothing is split";
  for (int round = 0; round < 3; ++round) {
    const std::map<std::string, char> before = other_thread_states();
    const auto t = filled(InitRule::normal(), KB_F32, std::int64_t{1} << 22, 5 + round);
    for (const auto& [tid, state] : other_thread_states()) {
      const auto earlier = before.find(tid);
      EXPECT_NE(earlier, before.end()) << "thread " << tid << " outlived the draw";
      if (earlier != before.end() && earlier->second != 'R') {
        EXPECT_NE(state, 'R') << "thread " << tid << " still runs after the draw";
      }
    }
  }
}

TEST(FillInput, ElementDependsOnlyOnItsIndex) {
  // A shorter tensor is a prefix of a longer one: sizes and presets can change without reshuffling.
  const auto small = filled(InitRule::normal(), KB_F32, 7, 9);
  const auto large = filled(InitRule::normal(), KB_F32, 1000, 9);
  EXPECT_EQ(std::memcmp(small.data(), large.data(), 7 * sizeof(float)), 0);
}

struct Moments {
  double mean = 0, stddev = 0;
};
Moments moments(const std::vector<float>& x) {
  double sum = 0, sum_sq = 0;
  for (float v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  for (float v : x) sum_sq += (v - mean) * (v - mean);
  return {mean, std::sqrt(sum_sq / static_cast<double>(x.size() - 1))};
}

// With n = 1e5 the standard error of the mean is sigma / 316 and of the standard deviation about
// sigma / 447; bounds of 0.02 sigma are over 6 standard errors, so a correct generator never fails.
constexpr std::int64_t kSamples = 100000;

TEST(FillInput, NormalHasRequestedMoments) {
  auto t = filled(InitRule::normal(), KB_F32, kSamples, 2024);
  const Moments m = moments(to_f32(t.view()));
  EXPECT_NEAR(m.mean, 0.0, 0.02);
  EXPECT_NEAR(m.stddev, 1.0, 0.02);

  auto scaled = filled(InitRule::normal(/*stddev=*/2.0, /*mean=*/3.0), KB_BF16, kSamples, 2025);
  const Moments ms = moments(to_f32(scaled.view()));
  EXPECT_NEAR(ms.mean, 3.0, 0.04);
  EXPECT_NEAR(ms.stddev, 2.0, 0.04);
}

TEST(FillInput, UniformStaysInRange) {
  auto t = filled(InitRule::uniform(-1.0, 3.0), KB_F32, kSamples, 31);
  const std::vector<float> x = to_f32(t.view());
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  // Draws lie in [-1, 3) in double; rounding to f32 could in principle reach 3 itself (within
  // 2^-30), so the upper bound is checked inclusively.
  EXPECT_GE(*lo, -1.0f);
  EXPECT_LE(*hi, 3.0f);
  EXPECT_LT(*lo, -0.99f);  // the range is actually covered
  EXPECT_GT(*hi, 2.99f);
  EXPECT_NEAR(moments(x).mean, 1.0, 0.04);  // sd of U(-1,3) is 1.15; 0.04 is > 10 standard errors
}

TEST(FillInput, RandIntInHalfOpenRange) {
  constexpr int kHigh = 7;
  auto t = filled(InitRule::randint(kHigh), KB_I32, kSamples, 8);
  std::vector<int> counts(kHigh, 0);
  for (std::int64_t i = 0; i < kSamples; ++i) {
    const std::int32_t v = t.as<std::int32_t>()[i];
    ASSERT_GE(v, 0);
    ASSERT_LT(v, kHigh);
    ++counts[static_cast<std::size_t>(v)];
  }
  // Each count is binomial with mean n/7 ~ 14286 and sd ~ 111; 1000 is 9 sd.
  for (int c : counts) EXPECT_NEAR(c, kSamples / kHigh, 1000);
}

TEST(FillInput, RejectsRandIntBoundsAnI32CannotHold) {
  EXPECT_THROW(filled(InitRule::randint((std::int64_t{1} << 31) + 1), KB_I32, 4, 1),
               std::invalid_argument);
  EXPECT_THROW(filled(InitRule::randint(-1), KB_I32, 4, 1), std::invalid_argument);
  EXPECT_NO_THROW(filled(InitRule::randint(std::int64_t{1} << 31), KB_I32, 4, 1));
  // Float tensors take any bound, with the reference's 64-bit wrap-around above 2^32.
  EXPECT_NO_THROW(filled(InitRule::randint(std::int64_t{1} << 40), KB_F32, 4, 1));
}

std::string digest(const HostTensor& t) {
  return sha256_hex(std::string_view(static_cast<const char*>(t.data()), t.spec().bytes()));
}

// SHA-256 of 100003 elements (seed 2024, stream 3) written by the generator before it was
// vectorized (commit 8790e9a, Release -march=native build): inputs must not move under changes to
// the generator, in any build type.
TEST(FillInput, MatchesPinnedDigests) {
  struct Pinned {
    InitRule rule;
    kb_dtype dtype;
    const char* sha256;
  };
  const Pinned pinned[] = {
      {InitRule::normal(), KB_BF16,
       "e5ef4a17e501af80c16f013419b4f3cd0318a16ecd329aa731c22923fd8930d8"},
      {InitRule::normal(), KB_F32,
       "f45f2fbff1266a6dee4e42855e89a9e3942a74339b91c550b45ac748db770406"},
      {InitRule::normal(0.02), KB_BF16,
       "14349297bf557f6b49236feabac3392b1c8ae81ae03cb6f115963c0b91287825"},
      {InitRule::normal(0.1, 1.0), KB_BF16,
       "3ea81dd38a6874bf2cff36d1729da874dc3cb0df5b4238ecea3abc792799ddb8"},
      {InitRule::normal(2.5, -3.0), KB_I32,
       "d6d42bae4155a72da0b475b464cb94250cb09ad84959dc3c3db2c46928e658ca"},
      {InitRule::uniform(0.0, 1.0), KB_BF16,
       "037355429fce6791fa15c55c55475b40d2d677bb4f407c004b7501e4634a1ee0"},
      {InitRule::uniform(-1.0, 3.0), KB_F32,
       "562c3e175c798522bc80f178a335294b764efe14422a63151407fea5165fdc79"},
      {InitRule::uniform(-100.0, 100.0), KB_I32,
       "96b246fc92861d27131fea5182524c6fd336a26c9ee0a7ef26bc65f6299a88e1"},
      {InitRule::randint(50257), KB_I32,
       "e488672aff2cb6106933c3124df573941175cc562f1a8a54dd7916bbf9981358"},
      {InitRule::randint(7), KB_F32,
       "46fa00fc8e3ad6f4c0630093765e1e25e5234fbbb625a2b92f450befaeede4bd"},
  };
  for (const Pinned& p : pinned) {
    SCOPED_TRACE(testing::Message()
                 << "rule kind " << static_cast<int>(p.rule.kind) << " scale " << p.rule.scale
                 << " shift " << p.rule.shift << " dtype " << p.dtype);
    HostTensor scalar(TensorSpec{"x", p.dtype, {100003}});
    kb_tensor view = scalar.view();
    input_gen_detail::fill_input_scalar(p.rule, 2024, 3, view);
    EXPECT_EQ(digest(scalar), p.sha256) << "scalar reference";
    EXPECT_EQ(digest(filled(p.rule, p.dtype, 100003, 2024, 3)), p.sha256) << "fill_input";
  }
}

// ---- The vector paths against the scalar reference ----

// Rules that reach every branch of the vector draw: the exact-in-f32 unit normal (with both signs
// of a zero mean), normals and uniforms through double, randint bounds that need the high half of
// the 64-bit product or wrap it (float tensors only; an i32 tensor takes bounds up to 2^31).
struct RuleCase {
  const char* name;
  InitRule rule;
  bool fits_i32;
};
const RuleCase kRuleCases[] = {
    {"normal()", InitRule::normal(), true},
    {"normal(1, -0)", InitRule::normal(1.0, -0.0), true},
    {"normal(0.02)", InitRule::normal(0.02), true},
    {"normal(0.1, 1)", InitRule::normal(0.1, 1.0), true},
    {"normal(2.5, -3)", InitRule::normal(2.5, -3.0), true},
    {"uniform(0, 1)", InitRule::uniform(0.0, 1.0), true},
    {"uniform(-1, 3)", InitRule::uniform(-1.0, 3.0), true},
    {"uniform(-1e-3, 7.5)", InitRule::uniform(-1e-3, 7.5), true},
    {"randint(0)", InitRule::randint(0), true},
    {"randint(1)", InitRule::randint(1), true},
    {"randint(7)", InitRule::randint(7), true},
    {"randint(50257)", InitRule::randint(50257), true},
    {"randint(2^31)", InitRule::randint(std::int64_t{1} << 31), true},
    {"randint(2^32 - 1)", InitRule::randint((std::int64_t{1} << 32) - 1), false},
    {"randint(2^32)", InitRule::randint(std::int64_t{1} << 32), false},
    {"randint(2^40 + 12345)", InitRule::randint((std::int64_t{1} << 40) + 12345), false},
};

// Around every vector length (4, 8, 16 u32 lanes) and step (4 vectors), and one length of several
// OpenMP tiles (2^16 values) with a ragged end: over a million values where the build is optimized,
// three tiles in unoptimized (sanitizer) builds, where a million would take minutes per target.
const std::int64_t kShortLengths[] = {0, 1, 3, 4, 5, 17, 63, 64, 65, 129};
#ifdef __OPTIMIZE__
constexpr std::int64_t kLongLength = 1000003;
#else
constexpr std::int64_t kLongLength = 2 * 65536 + 3;
#endif

struct SeedStream {
  std::uint64_t seed;
  std::uint32_t stream;
};
const SeedStream kSeedStreams[] = {{0, 0}, {1, 7}, {0xDEADBEEFCAFEF00Dull, 0xFFFFFFFFu}};

// The first element (by index) where two fills of the same spec differ, or -1.
std::int64_t first_difference(const HostTensor& a, const HostTensor& b) {
  const std::size_t size = dtype_size(a.spec().dtype);
  const auto* pa = static_cast<const unsigned char*>(a.data());
  const auto* pb = static_cast<const unsigned char*>(b.data());
  for (std::int64_t i = 0; i < a.spec().numel(); ++i)
    if (std::memcmp(pa + i * size, pb + i * size, size) != 0) return i;
  return -1;
}

std::string element_bits(const HostTensor& t, std::int64_t i) {
  std::uint32_t bits = 0;
  if (t.spec().dtype == KB_BF16)
    bits = t.as<bf16_t>()[i];
  else
    std::memcpy(&bits, t.as<char>() + i * 4, 4);
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", bits);
  return text;
}

void expect_vector_matches_scalar(const RuleCase& c, kb_dtype dtype, std::int64_t n, SeedStream s) {
  HostTensor reference(TensorSpec{"x", dtype, {n}});
  kb_tensor view = reference.view();
  input_gen_detail::fill_input_scalar(c.rule, s.seed, s.stream, view);
  const HostTensor vector = filled(c.rule, dtype, n, s.seed, s.stream);
  const std::int64_t i = first_difference(reference, vector);
  EXPECT_EQ(i, -1) << c.name << " dtype " << dtype << " n " << n << " seed " << s.seed << " stream "
                   << s.stream << ": element " << i << " is " << element_bits(vector, i)
                   << ", the reference has " << element_bits(reference, i);
}

// One test per Highway target input_gen_simd.cc may be compiled for: runs where this build has it
// and the CPU supports it, and says why it skipped otherwise.
class VectorPath : public testing::TestWithParam<std::int64_t> {
 protected:
  void SetUp() override {
    const std::int64_t target = GetParam();
    if ((input_gen_detail::compiled_simd_targets() & target) == 0)
      GTEST_SKIP() << hwy::TargetName(target) << " is not compiled into input_gen_simd.cc";
    if ((hwy::SupportedTargets() & target) == 0)
      GTEST_SKIP() << "this CPU does not support " << hwy::TargetName(target);
    hwy::SetSupportedTargetsForTest(target);
    ASSERT_EQ(input_gen_detail::dispatched_simd_target(), target);
  }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(VectorPath, BitIdenticalToScalarReference) {
  for (const RuleCase& c : kRuleCases) {
    for (kb_dtype dtype : {KB_BF16, KB_F32, KB_I32}) {
      if (dtype == KB_I32 && !c.fits_i32) continue;
      for (std::int64_t n : kShortLengths)
        for (SeedStream s : kSeedStreams) expect_vector_matches_scalar(c, dtype, n, s);
      expect_vector_matches_scalar(c, dtype, kLongLength, kSeedStreams[2]);
    }
  }
}

// Blocks from 2^32 on carry a non-zero second counter word, which no test-sized tensor reaches
// through fill_input: spans there, straddling the boundary, against the scalar span.
TEST_P(VectorPath, CounterHighWord) {
  constexpr std::int64_t kFirst = (std::int64_t{1} << 34) - 40;  // element 4 * 2^32 - 40
  constexpr std::int64_t kCount = 101;
  for (const RuleCase& c : {kRuleCases[0], kRuleCases[3], kRuleCases[6], kRuleCases[11]}) {
    const auto job = input_gen_detail::make_fill_job(c.rule, 99, 2, KB_F32);
    std::vector<float> reference(kCount), vector(kCount);
    input_gen_detail::fill_span_scalar(job, kFirst, kCount, reference.data());
    input_gen_detail::fill_span_simd(job, kFirst, kCount, vector.data());
    EXPECT_EQ(std::memcmp(reference.data(), vector.data(), kCount * sizeof(float)), 0) << c.name;
  }
  // The scalar span itself against Philox directly: element 2^34 is word 0 of block 2^32.
  const auto job =
      input_gen_detail::make_fill_job(InitRule::randint(std::int64_t{1} << 31), 99, 2, KB_I32);
  std::int32_t value = 0;
  input_gen_detail::fill_span_scalar(job, std::int64_t{1} << 34, 1, &value);
  const PhiloxBlock bits = philox4x32_10({0, 1, 2, 0}, philox_key(99));
  EXPECT_EQ(value, static_cast<std::int32_t>(bits[0] >> 1));
}

INSTANTIATE_TEST_SUITE_P(X86, VectorPath,
                         testing::Values(HWY_SCALAR, HWY_EMU128, HWY_SSSE3, HWY_SSE4, HWY_AVX2,
                                         HWY_AVX3, HWY_AVX3_DL),
                         [](const testing::TestParamInfo<std::int64_t>& target) {
                           return std::string(hwy::TargetName(target.param));
                         });

}  // namespace
}  // namespace kbench
