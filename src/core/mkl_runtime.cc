#include "core/mkl_runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <type_traits>

#ifdef KBENCH_MKL_RUNTIME
#include <mkl_cblas.h>
#include <mkl_service.h>
#endif

namespace kbench::mkl {
namespace {

#ifdef KBENCH_MKL_RUNTIME
constexpr const char* kBuildRuntime = KBENCH_MKL_RUNTIME;
// The handle's pointer types spell MKL's prototypes in plain types (LP64: MKL_INT is int, the CBLAS
// enums are ints, MKL_BF16 is unsigned short); these keep the two in step.
constexpr int kThreadingGnu = MKL_THREADING_GNU;
constexpr int kInterfaceLp64 = MKL_INTERFACE_LP64;
constexpr int kRowMajor = CblasRowMajor, kNoTrans = CblasNoTrans, kTrans = CblasTrans;
static_assert(std::is_same_v<MKL_INT, int> && sizeof(CBLAS_LAYOUT) == sizeof(int) &&
              sizeof(CBLAS_TRANSPOSE) == sizeof(int) && std::is_same_v<MKL_BF16, std::uint16_t>);
#else
constexpr const char* kBuildRuntime = "";
constexpr int kThreadingGnu = 0, kInterfaceLp64 = 0, kRowMajor = 0, kNoTrans = 0, kTrans = 0;
#endif

struct Loaded {
  Runtime runtime;
  bool ok = false;
  std::string why;
};

template <class Fn>
Fn symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  if (!address) throw std::runtime_error(std::string("no symbol ") + name);
  return reinterpret_cast<Fn>(address);
}

Loaded load() {
  Loaded loaded;
  const char* override_path = std::getenv("KBENCH_MKL");
  const std::string path = override_path && *override_path ? override_path : kBuildRuntime;
  if (path == "off") {
    loaded.why = "KBENCH_MKL=off";
    return loaded;
  }
  if (path.empty()) {
    loaded.why = "this build found none (scripts/install-mkl.sh, then configure again)";
    return loaded;
  }
  // RTLD_LOCAL: its cblas_* must not interpose on OpenBLAS's for the rest of the process. Never
  // closed: MKL keeps threads and buffers for the life of the process.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    loaded.why = error ? error : ("cannot open " + path);
    return loaded;
  }
  try {
    // The process's libgomp, not a second OpenMP runtime, and 32-bit integers as declared above,
    // whatever MKL_THREADING_LAYER or MKL_INTERFACE_LAYER say.
    symbol<int (*)(int)>(handle, "MKL_Set_Threading_Layer")(kThreadingGnu);
    symbol<int (*)(int)>(handle, "MKL_Set_Interface_Layer")(kInterfaceLp64);
    Runtime& r = loaded.runtime;
    r.sgemm_ = symbol<decltype(r.sgemm_)>(handle, "cblas_sgemm");
    r.gemm_bf16bf16f32_ = symbol<decltype(r.gemm_bf16bf16f32_)>(handle, "cblas_gemm_bf16bf16f32");
    r.set_num_threads_local_ = symbol<int (*)(int)>(handle, "MKL_Set_Num_Threads_Local");
    char version[256] = {};
    symbol<void (*)(char*, int)>(handle, "MKL_Get_Version_String")(version, sizeof version);
    r.version = version;
    r.path = path;
    loaded.ok = true;
  } catch (const std::exception& e) {
    loaded.why = path + ": " + e.what();
  }
  return loaded;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

// Sets MKL's thread count for this thread's calls and restores it afterwards, so that one call's
// budget does not leak into the next caller's.
class LocalThreads {
 public:
  LocalThreads(const Runtime& r, int threads)
      : runtime_(r), previous_(r.set_num_threads_local_(threads < 1 ? 1 : threads)) {}
  ~LocalThreads() { runtime_.set_num_threads_local_(previous_); }
  LocalThreads(const LocalThreads&) = delete;
  LocalThreads& operator=(const LocalThreads&) = delete;

 private:
  const Runtime& runtime_;
  int previous_;
};

}  // namespace

void Runtime::sgemm(bool b_transposed, std::int64_t m, std::int64_t n, std::int64_t k,
                    const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                    std::int64_t ldc, int threads) const {
  const LocalThreads local(*this, threads);
  sgemm_(kRowMajor, kNoTrans, b_transposed ? kTrans : kNoTrans, static_cast<int>(m),
         static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
         static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
}

void Runtime::gemm_bf16(bool b_transposed, std::int64_t m, std::int64_t n, std::int64_t k,
                        const std::uint16_t* a, std::int64_t lda, const std::uint16_t* b,
                        std::int64_t ldb, float* c, std::int64_t ldc, int threads) const {
  const LocalThreads local(*this, threads);
  gemm_bf16bf16f32_(kRowMajor, kNoTrans, b_transposed ? kTrans : kNoTrans, static_cast<int>(m),
                    static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
                    static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
}

const Runtime* runtime() {
  return loaded().ok ? &loaded().runtime : nullptr;
}

std::string status() {
  const Loaded& l = loaded();
  return l.ok ? l.runtime.version + " (" + l.runtime.path + ")" : "oneMKL not loaded: " + l.why;
}

std::string library_dir() {
  const std::string path = runtime() ? runtime()->path : "";
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

}  // namespace kbench::mkl
