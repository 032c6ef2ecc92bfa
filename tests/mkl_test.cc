// oneMKL as kbench loads it (core/mkl_runtime.h): present wherever the build found it, kept out of
// the process's global symbols so OpenBLAS keeps its cblas_* names, and, when it cannot be loaded,
// said once while every baseline runs on the other paths.
#include "core/mkl_runtime.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_support.h"
#include "ops/gemm.h"

namespace kbench::testing {
namespace {

constexpr bool kBuildFoundMkl = sizeof(KBENCH_MKL_RUNTIME) > 1;

TEST(Mkl, LoadsWhereTheBuildFoundIt) {
  if (!kBuildFoundMkl) GTEST_SKIP() << "this build found no MKL (scripts/install-mkl.sh)";
  ASSERT_NE(mkl::runtime(), nullptr) << mkl::status();
  EXPECT_NE(mkl::status().find("Math Kernel Library"), std::string::npos) << mkl::status();
  EXPECT_EQ(mkl::library_dir() + "/",
            std::string(KBENCH_MKL_RUNTIME).substr(0, mkl::library_dir().size() + 1));
  // Both paths run; their arithmetic is checked on every shape and epilogue in ops/gemm_test.
  std::vector<std::uint16_t> ones(16 * 16, 0x3f80);
  std::vector<float> product(16 * 16);
  const ops::Matrix m{ones.data(), KB_BF16, 16, 16, 16};
  for (const ops::GemmPath path : {ops::GemmPath::kMklBf16, ops::GemmPath::kMklSgemm}) {
    SCOPED_TRACE(ops::gemm_path_name(path));
    EXPECT_TRUE(ops::gemm_on_path(path, m, m, false, {product.data(), KB_F32, 16, 16, 16}));
    EXPECT_EQ(product[0], 16.0f);
    EXPECT_EQ(product.back(), 16.0f);
  }
}

// MKL's first call makes libmkl_rt's names reachable from the global scope (measured: dlsym of
// cblas_gemm_bf16bf16f32 is null after dlopen and set after one sgemm), but behind OpenBLAS, which
// every kbench executable loads first: a name both define must still bind to OpenBLAS.
TEST(Mkl, LeavesOpenblasItsCblasNames) {
  if (!mkl::runtime()) GTEST_SKIP() << mkl::status();
  ops::load_gemm_libraries();
  for (const char* name : {"cblas_sgemm", "cblas_dgemm", "cblas_sdot", "cblas_saxpy"}) {
    void* address = dlsym(RTLD_DEFAULT, name);
    ASSERT_NE(address, nullptr) << name;
    Dl_info info{};
    ASSERT_NE(dladdr(address, &info), 0) << name;
    EXPECT_NE(std::string(info.dli_fname).find("openblas"), std::string::npos)
        << name << " binds to " << info.dli_fname;
  }
}

TEST(Mkl, ALibraryThatCannotBeLoadedIsSaidOnceAndTheOtherPathsRun) {
  const CliRun run = run_shell(
      "KBENCH_MKL=/nonexistent/libmkl_rt.so.3 " + kbench_exe() +
      " eval -w 8p_GEMM --size smoke --candidate " + source_path("examples/8p_GEMM_fast.cpp") +
      " --warmup 1 --iters 3 --json --db " + temp_db("mkl-missing") + " 2>&1 1>/dev/null");
  EXPECT_EQ(run.exit_code, 0) << run.out;
  const std::string note = "oneMKL not loaded: /nonexistent/libmkl_rt.so.3";
  const std::size_t first = run.out.find(note);
  EXPECT_NE(first, std::string::npos) << run.out;
  EXPECT_EQ(run.out.find(note, first + 1), std::string::npos) << "said more than once:\n"
                                                              << run.out;
}

}  // namespace
}  // namespace kbench::testing
