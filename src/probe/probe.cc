// Peak measurements: register-resident FMA / dot-product loops per ISA and a STREAM-style triad.
//
// Compute loops keep kChains independent accumulator chains in registers, so that the only limit is
// the FMA units' throughput: a chain can issue once per FMA latency (4-5 cycles on current x86) and
// a core has up to 2 FMA pipes, so at least latency x pipes = 8-10 chains are needed; 12 leaves
// slack and still fits the 16 ymm registers of AVX2 beside the two constant operands. Each ISA
// variant is compiled with a target attribute and chosen at run time from /proc/cpuinfo, so one
// binary measures AVX-512 machines with their AVX-512 units and AVX2 machines without faulting.
// AMX tiles get the same treatment (a loop of tdpbf16ps on register-resident tiles), and the
// library ceiling is the best bf16 GEMM the linked libraries reach, through ops::gemm_on_path.
#include "probe/probe.h"

#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "core/amx.h"
#include "core/cpu_caches.h"
#include "core/environment.h"
#include "core/input_gen.h"
#include "core/tensor.h"
#include "core/timer.h"
#include "ops/gemm.h"
#include "ops/library_threads.h"

#if !defined(__x86_64__)
#error "kbench probe measures x86-64 vector units only"
#endif

namespace kbench {
namespace {

constexpr int kChains = 12;
// ~50 ms per timed run: long enough that timer overhead and the OpenMP fork are < 0.1%, short
// enough that best-of-kRepeats over three ISAs stays well under the 5 s probe budget.
constexpr double kRunSeconds = 0.05;
constexpr int kRepeats = 7;

// Results of the loops land here so the compiler must compute them.
volatile float g_float_sink;
volatile double g_double_sink;

// ---- Compute kernels: `iters` iterations of kChains independent vector operations each ----
// acc = acc * mul + add with mul slightly below 1 converges to add / (1 - mul): values stay normal
// (no denormal slow paths, no overflow) however long the loop runs.

__attribute__((target("avx2,fma"))) float fma_f32_12x8_avx2(std::int64_t iters) {
  const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
  __m256 acc[kChains];
#pragma GCC unroll 12
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(0.01f * static_cast<float>(c + 1));
  for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  return _mm256_cvtss_f32(sum);  // every lane holds the same value
}

__attribute__((target("avx512f"))) float fma_f32_12x16_avx512(std::int64_t iters) {
  const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
  __m512 acc[kChains];
#pragma GCC unroll 12
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.01f * static_cast<float>(c + 1));
  for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return _mm512_cvtss_f32(sum);  // every lane holds the same value
}

// vdpbf16ps: each f32 lane accumulates two bf16 products. Operands 1/16 make products of 2^-8, so
// the accumulators grow by 2^-7 per step and stay far from overflow for any run length.
__attribute__((target("avx512f,avx512bf16"))) float dot_bf16_12x16_avx512(std::int64_t iters) {
  const __m512 sixteenth = _mm512_set1_ps(0.0625f);
  const __m512bh a = _mm512_cvtne2ps_pbh(sixteenth, sixteenth);
  const __m512bh b = _mm512_cvtne2ps_pbh(sixteenth, sixteenth);
  __m512 acc[kChains];
#pragma GCC unroll 12
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return _mm512_cvtss_f32(sum);  // every lane holds the same value
}

// fp16 fixed point of acc * mul + add is add / (1 - mul) = 1/2: normal and well inside fp16 range.
__attribute__((target("avx512f,avx512bw,avx512fp16"))) float fma_fp16_12x32_avx512(
    std::int64_t iters) {
  const __m512h mul = _mm512_set1_ph(static_cast<_Float16>(0.9990234375f));   // 1 - 2^-10, exact
  const __m512h add = _mm512_set1_ph(static_cast<_Float16>(0.00048828125f));  // 2^-11, exact
  __m512h acc[kChains];
#pragma GCC unroll 12
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm512_set1_ph(static_cast<_Float16>(0.125f * static_cast<float>(c)));
  for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ph(acc[c], mul, add);
  }
  __m512h sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ph(sum, acc[c]);
  return static_cast<float>(_mm512_cvtsh_h(sum));
}

// Fallback for x86-64 without AVX2+FMA: separate multiply and add, 2 flops per lane per pair.
float mul_add_f32_12x4_sse2(std::int64_t iters) {
  const __m128 mul = _mm_set1_ps(0.999999f), add = _mm_set1_ps(1e-7f);
  __m128 acc[kChains];
#pragma GCC unroll 12
  for (int c = 0; c < kChains; ++c) acc[c] = _mm_set1_ps(0.01f * static_cast<float>(c + 1));
  for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], mul), add);
  }
  __m128 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm_add_ps(sum, acc[c]);
  return _mm_cvtss_f32(sum);  // every lane holds the same value
}

// ---- AMX-BF16 tiles ----

// The 64-byte operand of ldtilecfg, palette 1: rows and bytes per row of each tile register.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "ldtilecfg reads exactly 64 bytes");

constexpr int kAmxAccumulators = 4;
// One tdpbf16ps: C (16x16 f32) += A (16 rows x 32 bf16) . B (16 rows of 16 bf16 pairs), i.e.
// 16 x 16 x 32 multiply-adds.
constexpr double kAmxFlopsPerInstruction = 2.0 * 16 * 16 * 32;

// Four accumulators C0..C3 (tmm0-3) on one A (tmm4) and one B (tmm5): the tile unit takes a
// tdpbf16ps every 16 cycles, while one takes several times that to finish, so a single
// accumulator would leave the unit idle; four independent ones keep it busy, and A and B never
// leave their registers. Operands of 1/16 add 32 x 2^-8 = 1/8 per instruction to each element, so
// the accumulators stay small for any run length. The caller holds the tile-data permission.
__attribute__((target("amx-tile,amx-bf16"))) float dot_bf16_4tiles_amx(std::int64_t iters) {
  TileConfig config;
  for (int t = 0; t < 6; ++t) {
    config.rows[t] = 16;
    config.bytes_per_row[t] = 64;
  }
  alignas(64) std::uint16_t operand[16 * 32];
  std::fill(std::begin(operand), std::end(operand), std::uint16_t{0x3d80});  // bf16 1/16
  alignas(64) float result[16 * 16];
  // GCC's tile intrinsics are asm statements that do not tell the compiler which memory they read:
  // this barrier makes the stores above happen before them.
  asm volatile("" : : "r"(&config), "r"(operand) : "memory");
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  for (std::int64_t i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 5);
    _tile_dpbf16ps(2, 4, 5);
    _tile_dpbf16ps(3, 4, 5);
  }
  float sum = 0;
  _tile_stored(0, result, 64);
  sum += result[0];
  _tile_stored(1, result, 64);
  sum += result[0];
  _tile_stored(2, result, 64);
  sum += result[0];
  _tile_stored(3, result, 64);
  sum += result[0];
  _tile_release();  // back to the init state: context switches save no tile data
  return sum;
}

struct ComputeKernel {
  const char* isa;
  float (*run)(std::int64_t iters);
  double flops_per_iter;  // per thread
  const char* method;     // the instruction and register shape, for PeakReport::methods
};

// Seconds of CPU the calling thread has run: a thread that another process time-slices with does
// not accumulate it while descheduled, so rates per CPU-second stay those of the hardware on a busy
// box.
// Summed per-thread rate (iterations per CPU-second) of every thread running `iters` iterations at
// once.
double iters_per_cpu_second(const ComputeKernel& kernel, int threads, std::int64_t iters) {
  float sink = 0;
  double rate = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink, rate)
  {
    const double start = thread_cpu_seconds();
    sink += kernel.run(iters);
    rate += static_cast<double>(iters) / (thread_cpu_seconds() - start);
  }
  g_float_sink = sink;
  return rate;
}

// Best GFLOP/s over kRepeats runs of about kRunSeconds each.
double best_gflops(const ComputeKernel& kernel, int threads) {
  // Size the run on one thread, outside OpenMP: a team member that starts late (another process on
  // its core) would otherwise inflate a short calibration run and shrink every timed run to noise.
  // Calibration doubles as warm-up, letting clocks settle at the frequency this vector width
  // sustains.
  std::int64_t iters = 1 << 12;
  double seconds = 0;
  for (;;) {
    const double start = now_seconds();
    g_float_sink = kernel.run(iters);
    seconds = now_seconds() - start;
    if (seconds >= kRunSeconds / 4) break;
    iters *= 2;
  }
  iters =
      std::max<std::int64_t>(1, std::llround(static_cast<double>(iters) * kRunSeconds / seconds));
  double best = 0;
  for (int r = 0; r < kRepeats; ++r) {
    best =
        std::max(best, kernel.flops_per_iter * iters_per_cpu_second(kernel, threads, iters) / 1e9);
  }
  return best;
}

// ---- Library ceiling ----

// Square extents tried for the library GEMM, largest first: 2048^3 (17 GFLOP), the shape at which
// oneDNN and OpenBLAS were measured in the platform issue, is large enough for every path to reach
// its steady rate; on the Ice Lake dev VM the paths' rates moved by up to 1.5x between 1536^3 and
// 2048^3, so the largest shape the budget allows is used. Smaller ones keep slow machines in
// budget.
constexpr std::int64_t kLibraryExtents[] = {2048, 1536, 1024, 512};
// The largest extent whose one call, at the measured fp32 FMA rate, takes at most this long: every
// AVX-512 or AVX2+FMA core of 86 GFLOP/s or more gets 2048^3.
constexpr double kLibraryCallSeconds = 0.2;

struct LibraryCeiling {
  double gflops = 0;
  std::string method;                         // "openblas_sgemm 1536^3"
  std::map<std::string, double> path_gflops;  // every path that ran
};

std::int64_t library_gemm_extent(double fp32_gflops) {
  for (const std::int64_t n : kLibraryExtents) {
    const double flops =
        2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    if (flops / (fp32_gflops * 1e9) <= kLibraryCallSeconds) return n;
  }
  return kLibraryExtents[std::size(kLibraryExtents) - 1];
}

// The fastest bf16-in, bf16-out GEMM over every library path, with `threads` OpenMP and OpenBLAS
// threads (both restored afterwards); best of the calls.
LibraryCeiling best_library_gemm(int threads, double fp32_gflops) {
  const std::int64_t n = library_gemm_extent(fp32_gflops);
  const ops::LibraryThreads library_threads(threads);
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  // The same measurement that picks the baselines' paths (paths taking turns, best call each).
  std::vector<ops::PathTiming> timings;
  ops::measure_fastest_path({n, n, n, /*b_transposed=*/false, /*f32_operands=*/false, threads},
                            &timings);
  LibraryCeiling best;
  for (const ops::PathTiming& t : timings) {
    const double gflops = flops / (t.best_ms * 1e-3) / 1e9;
    best.path_gflops[ops::gemm_path_name(t.path)] = gflops;
    if (gflops > best.gflops) {
      best.gflops = gflops;
      best.method = std::string(ops::gemm_path_name(t.path)) + " " + std::to_string(n) + "^3";
    }
  }
  return best;
}

// ---- Memory bandwidth ----

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<double, FreeDeleter>;

constexpr std::size_t kHugePage = std::size_t{2} << 20;

Buffer allocate_doubles(std::size_t n) {
  const std::size_t bytes = (n * sizeof(double) + kHugePage - 1) / kHugePage * kHugePage;
  auto* p = static_cast<double*>(std::aligned_alloc(kHugePage, bytes));
  if (!p) throw std::bad_alloc();
  // Transparent huge pages take TLB misses out of the measurement; advisory, so failure is
  // harmless.
  madvise(p, bytes, MADV_HUGEPAGE);
  return Buffer(p);
}

// Out of line, so the compiler cannot see that the buffers are freed unread and drop the stores.
__attribute__((noinline)) void triad(double* __restrict a, const double* __restrict b,
                                     const double* __restrict c, double scalar, std::int64_t n,
                                     int threads) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
}

// Bytes of L3 that `threads` threads can keep data in: one L3 instance's size times the number of
// instances the threads can spread over. 0 when unknown.
std::size_t l3_reach_bytes(int threads) {
  const CpuCaches& caches = cpu_caches();
  if (caches.l3_bytes <= 0) return 0;
  const int per_instance = std::max(1, caches.l3_shared_by);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int instances = std::max(1, static_cast<int>((cpus + per_instance - 1) / per_instance));
  return static_cast<std::size_t>(caches.l3_bytes) *
         static_cast<std::size_t>(std::min(threads, instances));
}

// Elements per array: 288 MiB in all (9x this machine's 32 MiB L3) and at least 8x the L3 the
// threads can reach, so no part of an array is still cached when a pass comes back to it; capped
// at an eighth of physical memory per array. Larger only costs first-touch time.
std::size_t triad_elements(int threads) {
  std::size_t bytes = std::max(std::size_t{96} << 20, 8 * l3_reach_bytes(threads) / 3);
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0)
    bytes =
        std::min(bytes, static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size) / 8);
  return bytes / sizeof(double);
}

// STREAM triad a = b + s*c, best of several passes. Bytes counted per element: 8 read of b, 8 read
// of c, 8 written to a = 24, as STREAM counts them. With ordinary stores the CPU also reads a's
// lines before writing them (write-allocate), so actual DRAM traffic is up to 4/3 of what is
// counted; kernels writing outputs with ordinary stores see the same, so this is the bandwidth they
// can reach.
struct Triad {
  static constexpr int kPasses = 8;
  double gbps = 0;
  std::size_t mib_per_array = 0;
};

Triad best_triad(int threads) {
  constexpr int kPasses = Triad::kPasses;
  const std::size_t n = triad_elements(threads);
  const auto count = static_cast<std::int64_t>(n);
  Buffer a = allocate_doubles(n), b = allocate_doubles(n), c = allocate_doubles(n);
  double* pa = a.get();
  double* pb = b.get();
  double* pc = c.get();
  // First touch with the triad's own static schedule, so page faults stay out of the timed passes
  // and each page sits on the NUMA node of the thread that will stream it.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    pa[i] = 0.0;
    pb[i] = 1.0;
    pc[i] = 2.0;
  }
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    const double start = now_seconds();
    triad(pa, pb, pc, 3.0, count, threads);
    const double seconds = now_seconds() - start;
    best = std::max(best, 3.0 * sizeof(double) * static_cast<double>(n) / seconds / 1e9);
  }
  g_double_sink = pa[n / 2];
  return {best, n * sizeof(double) >> 20};
}

}  // namespace

PeakReport higher_of(const PeakReport& a, const PeakReport& b) {
  PeakReport r = b;
  const auto keep = [&](const char* method, auto PeakReport::*field, bool a_higher) {
    if (!a_higher) return;
    r.*field = a.*field;
    if (const auto m = a.methods.find(method); m != a.methods.end()) r.methods[method] = m->second;
  };
  const auto higher = [](const std::optional<double>& x, const std::optional<double>& y) {
    return x && (!y || *x > *y);
  };
  keep("fp32_fma", &PeakReport::fp32_fma_gflops, a.fp32_fma_gflops > b.fp32_fma_gflops);
  keep("fp32_fma_ymm", &PeakReport::fp32_fma_ymm_gflops,
       higher(a.fp32_fma_ymm_gflops, b.fp32_fma_ymm_gflops));
  keep("bf16_dot", &PeakReport::bf16_dot_gflops, higher(a.bf16_dot_gflops, b.bf16_dot_gflops));
  keep("fp16_fma", &PeakReport::fp16_fma_gflops, higher(a.fp16_fma_gflops, b.fp16_fma_gflops));
  keep("amx_bf16", &PeakReport::amx_bf16_gflops, higher(a.amx_bf16_gflops, b.amx_bf16_gflops));
  keep("mem_bw", &PeakReport::mem_bw_gbps, a.mem_bw_gbps > b.mem_bw_gbps);
  if (a.library_gemm_gflops > b.library_gemm_gflops) {
    keep("library_gemm", &PeakReport::library_gemm_gflops, true);
    r.library_gemm_method = a.library_gemm_method;
  }
  for (const auto& [path, gflops] : a.library_gemm_paths)
    if (gflops > r.library_gemm_paths[path]) r.library_gemm_paths[path] = gflops;
  return r;
}

std::pair<double, std::string> PeakReport::bf16_matmul_peak() const {
  // The fastest measured unit, not the most specialised: on Sapphire and Emerald Rapids vdpbf16ps
  // issues once every two cycles, half the multiply-adds of two fp32 FMA ports, so without AMX a
  // GEMM that widens bf16 to f32 outruns the dot-product unit (157 against 85 GFLOP/s measured).
  std::pair<double, std::string> fastest{fp32_fma_gflops, "fp32_fma"};
  const auto consider = [&fastest](const std::optional<double>& gflops, const char* unit) {
    if (gflops && *gflops > fastest.first) fastest = {*gflops, unit};
  };
  consider(bf16_dot_gflops, "bf16_dot");
  consider(amx_bf16_gflops, "amx_bf16");
  return fastest;
}

nlohmann::json PeakReport::to_json() const {
  const auto optional_number = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json j;
  j["version"] = kFormatVersion;
  j["threads"] = threads;
  j["fp32_fma_gflops"] = fp32_fma_gflops;
  j["fp32_fma_ymm_gflops"] = optional_number(fp32_fma_ymm_gflops);
  j["bf16_dot_gflops"] = optional_number(bf16_dot_gflops);
  j["fp16_fma_gflops"] = optional_number(fp16_fma_gflops);
  j["amx_bf16_gflops"] = optional_number(amx_bf16_gflops);
  j["library_gemm_gflops"] = library_gemm_gflops;
  j["library_gemm_method"] = library_gemm_method;
  j["library_gemm_paths"] = library_gemm_paths;
  j["mem_bw_gbps"] = mem_bw_gbps;
  const auto [peak, unit] = bf16_matmul_peak();
  j["bf16_matmul_peak"] = {{"gflops", peak}, {"unit", unit}};
  j["isa_used"] = isa_used;
  j["methods"] = methods;
  j["seconds_taken"] = seconds_taken;
  return j;
}

PeakReport PeakReport::from_json(const nlohmann::json& j) {
  if (j.value("version", 0) != kFormatVersion)
    throw std::runtime_error("probe record of another format version");
  // at(): a key the writer always writes must be there, null or not.
  const auto optional_number = [&j](const char* key) -> std::optional<double> {
    if (j.at(key).is_null()) return std::nullopt;
    return j.at(key).get<double>();
  };
  PeakReport r;
  r.threads = j.at("threads").get<int>();
  r.fp32_fma_gflops = j.at("fp32_fma_gflops").get<double>();
  r.fp32_fma_ymm_gflops = optional_number("fp32_fma_ymm_gflops");
  r.bf16_dot_gflops = optional_number("bf16_dot_gflops");
  r.fp16_fma_gflops = optional_number("fp16_fma_gflops");
  r.amx_bf16_gflops = optional_number("amx_bf16_gflops");
  r.library_gemm_gflops = j.at("library_gemm_gflops").get<double>();
  r.library_gemm_method = j.at("library_gemm_method").get<std::string>();
  r.library_gemm_paths = j.at("library_gemm_paths").get<std::map<std::string, double>>();
  r.mem_bw_gbps = j.at("mem_bw_gbps").get<double>();
  r.isa_used = j.at("isa_used").get<std::string>();
  r.methods = j.at("methods").get<std::map<std::string, std::string>>();
  r.seconds_taken = j.value("seconds_taken", 0.0);
  return r;
}

PeakReport measure_peaks(int threads) {
  const double start = now_seconds();
  PeakReport report;
  report.threads = threads > 0 ? threads : omp_get_max_threads();

  // Flops per iteration = chains x lanes x flops per lane per instruction.
  const ComputeKernel fma_ymm{"avx2+fma", fma_f32_12x8_avx2, kChains * 8 * 2.0,
                              "avx2 vfmadd231ps ymm, 12 chains x 8 lanes"};
  ComputeKernel fp32{"sse2", mul_add_f32_12x4_sse2, kChains * 4 * 2.0,
                     "sse2 mulps+addps, 12 chains x 4 lanes"};
  if (cpu_has("avx512f"))
    fp32 = {"avx512f", fma_f32_12x16_avx512, kChains * 16 * 2.0,
            "avx512f vfmadd231ps zmm, 12 chains x 16 lanes"};
  else if (cpu_has("avx2") && cpu_has("fma"))
    fp32 = fma_ymm;
  report.fp32_fma_gflops = best_gflops(fp32, report.threads);
  report.isa_used = std::string("fp32:") + fp32.isa;
  report.methods["fp32_fma"] = fp32.method;
  if (std::string_view(fp32.isa) == "avx512f") {
    report.fp32_fma_ymm_gflops = best_gflops(fma_ymm, report.threads);
    report.methods["fp32_fma_ymm"] = fma_ymm.method;
  }

  if (cpu_has("avx512f") && cpu_has("avx512_bf16")) {
    // 32 bf16 products summed pairwise into 16 f32 lanes: 2 multiply-adds = 4 flops per f32 lane.
    const ComputeKernel bf16{"avx512_bf16", dot_bf16_12x16_avx512, kChains * 16 * 4.0,
                             "avx512_bf16 vdpbf16ps zmm, 12 chains x 16 lanes"};
    report.bf16_dot_gflops = best_gflops(bf16, report.threads);
    report.isa_used += " bf16:avx512_bf16";
    report.methods["bf16_dot"] = bf16.method;
  }
  if (cpu_has("avx512_fp16") && cpu_has("avx512bw")) {
    const ComputeKernel fp16{"avx512_fp16", fma_fp16_12x32_avx512, kChains * 32 * 2.0,
                             "avx512_fp16 vfmadd231ph zmm, 12 chains x 32 lanes"};
    report.fp16_fma_gflops = best_gflops(fp16, report.threads);
    report.isa_used += " fp16:avx512_fp16";
    report.methods["fp16_fma"] = fp16.method;
  }
  // The permission is process-wide: the OpenMP threads of best_gflops inherit it.
  if (cpu_has_amx_bf16() && request_amx_permission()) {
    const ComputeKernel amx{"amx_bf16", dot_bf16_4tiles_amx,
                            kAmxAccumulators * kAmxFlopsPerInstruction,
                            "amx_bf16 tdpbf16ps, 4 accumulator tiles 16x16 f32"};
    report.amx_bf16_gflops = best_gflops(amx, report.threads);
    report.isa_used += " amx:amx_bf16";
    report.methods["amx_bf16"] = amx.method;
  }

  const LibraryCeiling library = best_library_gemm(report.threads, report.fp32_fma_gflops);
  report.library_gemm_gflops = library.gflops;
  report.library_gemm_method = library.method;
  report.library_gemm_paths = library.path_gflops;
  if (!library.method.empty()) {
    report.isa_used += " library:" + library.method.substr(0, library.method.find(' '));
    report.methods["library_gemm"] =
        library.method + ", bf16 in and out, f32 accumulation, best call of each path";
  }

  const Triad triad = best_triad(report.threads);
  report.mem_bw_gbps = triad.gbps;
  report.isa_used += " mem:triad";
  report.methods["mem_bw"] = "STREAM triad, 3 arrays x " + std::to_string(triad.mib_per_array) +
                             " MiB, best of " + std::to_string(Triad::kPasses) + " passes";
  report.seconds_taken = now_seconds() - start;
  return report;
}

}  // namespace kbench
