// AMX support end to end: the example candidate examples/8p_GEMM_amx.cpp is correct at edge shapes
// (in process, on whichever path this CPU takes) and through `kbench eval`, takes the tile path
// where the CPU has AMX-BF16, and candidates in the worker may call arch_prctl and hold the
// tile-data permission the worker requested. The AMX-only checks skip, saying why, elsewhere.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.h"
#include "core/amx.h"
#include "core/bf16.h"
#include "harness/compiler.h"
#include "kbench/kernel.h"

namespace kbench::testing {
namespace {

using RunFn = int (*)(const kb_config*, const kb_tensor*, int32_t, kb_tensor*, int32_t);
using QueryFn = int (*)();

bool amx_usable() {
  return cpu_has_amx_bf16() && request_amx_permission();
}

std::string amx_absent_reason() {
  return cpu_has_amx_bf16()
             ? "the kernel refused the AMX tile-data permission (arch_prctl ARCH_REQ_XCOMP_PERM)"
             : "this CPU has no amx_bf16 (cpuid leaf 7 EDX bit 22): the tile path compiles here "
               "but cannot run";
}

// The example compiled with kbench's fixed candidate command and loaded into this process.
class AmxExample : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto cache = std::filesystem::temp_directory_path() / "kbench-tests" / "cache";
    const CompileOutcome compiled =
        compile_candidate(source_path("examples/8p_GEMM_amx.cpp"), {cache.string()});
    ASSERT_TRUE(compiled.ok) << compiled.diagnostics;
    handle_ = dlopen(compiled.so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    run_ = reinterpret_cast<RunFn>(dlsym(handle_, "kb_run"));
    uses_tiles_ = reinterpret_cast<QueryFn>(dlsym(handle_, "gemm_amx_example_uses_tiles"));
  }
  static void TearDownTestSuite() {
    if (handle_) dlclose(handle_);
  }
  void SetUp() override {
    ASSERT_NE(run_, nullptr);
    ASSERT_NE(uses_tiles_, nullptr);
  }

  static inline void* handle_ = nullptr;
  static inline RunFn run_ = nullptr;
  static inline QueryFn uses_tiles_ = nullptr;
};

kb_tensor matrix_view(std::vector<bf16_t>& data, std::int64_t rows, std::int64_t cols) {
  kb_tensor t{};
  t.data = data.data();
  t.dtype = KB_BF16;
  t.rank = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  return t;
}

// Extents around the tile edges (1, 16-1, 16, 16+1, 32 of K per tile, the 32 x 32 block) and the
// smoke size, whose extents are primes.
struct Shape {
  std::int64_t m, k, n;
};
constexpr Shape kEdgeShapes[] = {{1, 1, 1},    {15, 31, 15}, {16, 32, 16},  {17, 33, 17},
                                 {32, 64, 32}, {33, 65, 47}, {37, 45, 61},  {1, 100, 70},
                                 {70, 3, 1},   {64, 96, 80}, {100, 257, 99}};

TEST_F(AmxExample, MatchesADoubleReferenceAtEdgeShapes) {
  std::printf("path on this CPU: %s\n", uses_tiles_() ? "AMX tiles" : "f32 fallback");
  std::mt19937 rng(12345);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int max_threads = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  for (const Shape& s : kEdgeShapes) {
    std::vector<bf16_t> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n, 0x7fc0);  // c starts as NaN
    for (auto& x : a) x = f32_to_bf16(normal(rng));
    for (auto& x : b) x = f32_to_bf16(normal(rng));
    for (int threads = 1; threads <= max_threads; ++threads) {
      std::fill(c.begin(), c.end(), bf16_t{0x7fc0});
      const kb_tensor inputs[2] = {matrix_view(a, s.m, s.k), matrix_view(b, s.k, s.n)};
      kb_tensor output = matrix_view(c, s.m, s.n);
      const kb_config config{threads, 0, nullptr};
      ASSERT_EQ(run_(&config, inputs, 2, &output, 1), 0);
      // |out - exact| <= (bf16 rounding of the result, half an ulp = 2^-9 relative) + (f32
      // accumulation, K * 2^-24 of the sum of |products|); the bound below doubles both.
      double worst_excess = -1;
      std::int64_t worst = -1;
      double worst_exact = 0;
      for (std::int64_t i = 0; i < s.m; ++i) {
        for (std::int64_t j = 0; j < s.n; ++j) {
          double exact = 0, magnitude = 0;
          for (std::int64_t k = 0; k < s.k; ++k) {
            const double p = static_cast<double>(bf16_to_f32(a[i * s.k + k])) *
                             static_cast<double>(bf16_to_f32(b[k * s.n + j]));
            exact += p;
            magnitude += std::abs(p);
          }
          const double got = bf16_to_f32(c[i * s.n + j]);
          const double bound = std::ldexp(std::abs(exact), -8) +
                               static_cast<double>(s.k) * std::ldexp(magnitude, -23);
          const double excess = std::isfinite(got) ? std::abs(got - exact) - bound : 1e30;
          if (excess > worst_excess) {
            worst_excess = excess;
            worst = i * s.n + j;
            worst_exact = exact;
          }
        }
      }
      EXPECT_LE(worst_excess, 0.0) << s.m << "x" << s.k << "x" << s.n << " threads=" << threads
                                   << ": element (" << worst / s.n << ", " << worst % s.n
                                   << ") = " << bf16_to_f32(c[worst]) << ", exact " << worst_exact;
    }
  }
}

TEST_F(AmxExample, TakesTheTilePathWhereTheCpuHasAmx) {
  if (!amx_usable()) GTEST_SKIP() << amx_absent_reason();
  EXPECT_EQ(uses_tiles_(), 1);
}

TEST_F(AmxExample, TakesTheFallbackWhereTheCpuHasNoAmx) {
  if (amx_usable()) GTEST_SKIP() << "this CPU has AMX: the fallback is not the path taken here";
  EXPECT_EQ(uses_tiles_(), 0);
}

nlohmann::json eval_json(const std::string& args) {
  const CliRun run = run_kbench("eval --size smoke --warmup 1 --iters 5 --json " + args);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  return nlohmann::json::parse(run.out);
}

TEST(AmxCli, ExampleIsCorrectThroughEval) {
  const std::string db = temp_db("amx_example");
  const int max_threads = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  for (int threads = 1; threads <= max_threads; ++threads) {
    const auto result =
        eval_json("--workload 8p_GEMM --threads " + std::to_string(threads) + " --candidate " +
                  source_path("examples/8p_GEMM_amx.cpp") + " --db " + db);
    EXPECT_EQ(result["status"], "correct")
        << "threads=" << threads << ": " << result["error"] << "\n"
        << result["diagnostics"];
  }
}

// A naive 8p_GEMM candidate that fails with 7 when arch_prctl is refused (the worker's seccomp
// filter must allow it) and with 8 when the CPU has AMX but the worker did not obtain the tile
// permission before loading it.
constexpr const char* kPermissionCandidate = R"(
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kbench/kernel.h"
extern "C" int kb_run(const kb_config*, const kb_tensor* in, int32_t, kb_tensor* out, int32_t) {
  unsigned long permitted = 0;
  if (syscall(SYS_arch_prctl, 0x1022 /* ARCH_GET_XCOMP_PERM */, &permitted) != 0 && errno == EPERM)
    return 7;
  if (EXPECT_TILE_PERMISSION && !(permitted & (1ul << 18))) return 8;
  const int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
  const uint16_t* a = (const uint16_t*)in[0].data;
  const uint16_t* b = (const uint16_t*)in[1].data;
  uint16_t* c = (uint16_t*)out[0].data;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0;
      for (int64_t k = 0; k < K; ++k) s += kb_bf16_to_f32(a[i * K + k]) * kb_bf16_to_f32(b[k * N + j]);
      c[i * N + j] = kb_f32_to_bf16(s);
    }
  return 0;
}
)";

TEST(AmxCli, WorkerLetsCandidatesUseArchPrctlAndHoldsTheTilePermission) {
  if (!amx_usable())
    std::printf("checking only that arch_prctl is allowed: %s\n", amx_absent_reason().c_str());
  const auto path =
      std::filesystem::temp_directory_path() / "kbench-tests" / "amx_permission_candidate.cpp";
  std::filesystem::create_directories(path.parent_path());
  {
    std::ofstream out(path);
    out << "#define EXPECT_TILE_PERMISSION " << (amx_usable() ? 1 : 0) << "\n"
        << kPermissionCandidate;
  }
  const auto result = eval_json("--workload 8p_GEMM --candidate " + path.string() + " --db " +
                                temp_db("amx_permission"));
  EXPECT_EQ(result["status"], "correct") << result["error"] << "\n" << result["diagnostics"];
}

}  // namespace
}  // namespace kbench::testing
