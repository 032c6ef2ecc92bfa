// Philox-driven input generation: normals by a tabulated inverse CDF, uniform floats and bounded
// integers. This file holds the table, the scalar reference and the split over threads; the vector
// kernels that fill_input runs are in input_gen_simd.cc and write the same bytes.
#include "core/input_gen.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <sched.h>

#include "core/bf16.h"
#include "core/input_gen_internal.h"
#include "core/philox.h"
#include "core/tensor.h"

namespace kbench {
namespace input_gen_detail {
namespace {

// Normals come from the inverse normal CDF, tabulated once at 2^16 + 1 points and interpolated
// linearly with the low 16 bits: one 32-bit draw per value and no transcendental call, because
// kbench regenerates every input before every timed call (Box-Muller in double took ~35 ns per
// value here, 2.3 s per call of 12p at the cpu size). The table spans quantiles (i + 0.5) / 65537,
// so values are bounded by +-4.3 sigma, which no workload depends on.
//
// Every multiply-add below and in draw() is an explicit std::fma: GCC contracts a * b + c into an
// FMA even in ISO C++ mode when optimizing for a CPU that has one, and not at -O0, so without them
// the Release and the sanitizer (Debug) builds drew different inputs. The fma calls sit exactly
// where the Release -march=native build fused, so inputs stay bit-identical to that build's;
// std::fma is exact in software too, so every build and CPU now agrees (given the same libm).

// Acklam's rational approximation of the inverse normal CDF (relative error < 1.2e-9), refined by
// one Halley step on erfc, which brings it to double precision.
double inverse_normal_cdf(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  // Horner's rule with one rounding per step.
  const auto tail_numerator = [](double q) {
    return std::fma(
        std::fma(std::fma(std::fma(std::fma(c[0], q, c[1]), q, c[2]), q, c[3]), q, c[4]), q, c[5]);
  };
  const auto tail_denominator = [](double q) {
    return std::fma(std::fma(std::fma(std::fma(d[0], q, d[1]), q, d[2]), q, d[3]), q, 1.0);
  };
  double x;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = tail_numerator(q) / tail_denominator(q);
  } else if (p <= 1 - kLow) {
    const double q = p - 0.5, r = q * q;
    const double numerator =
        std::fma(std::fma(std::fma(std::fma(std::fma(a[0], r, a[1]), r, a[2]), r, a[3]), r, a[4]),
                 r, a[5]) *
        q;
    const double denominator = std::fma(
        std::fma(std::fma(std::fma(std::fma(b[0], r, b[1]), r, b[2]), r, b[3]), r, b[4]), r, 1.0);
    x = numerator / denominator;
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -tail_numerator(q) / tail_denominator(q);
  }
  const double e = std::fma(std::erfc(-x / std::numbers::sqrt2), 0.5, -p);
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / std::fma(x * u, 0.5, 1.0);
}

// Stored as f32 (256 KiB, so it stays in a core's L2 under random lookups); values end as bf16.
const std::vector<float>& quantile_table() {
  static const std::vector<float> table = [] {
    std::vector<float> q(kQuantilePoints);
    for (std::size_t i = 0; i < kQuantilePoints; ++i)
      q[i] = static_cast<float>(inverse_normal_cdf((static_cast<double>(i) + 0.5) /
                                                   static_cast<double>(kQuantilePoints)));
    return q;
  }();
  return table;
}

// Interpolated in f32: the high bits pick the interval, the low 16 bits (exact in f32) the point.
inline float standard_normal(const float* quantiles, std::uint32_t bits) {
  const std::uint32_t index = bits >> (32 - kQuantileBits);
  const float fraction = static_cast<float>(bits & ((1u << (32 - kQuantileBits)) - 1)) * 0x1p-16f;
  return std::fma(fraction, quantiles[index + 1] - quantiles[index], quantiles[index]);
}

// The value drawn from 32 random bits by `job`, in double.
inline double draw(const FillJob& job, std::uint32_t bits) {
  switch (job.kind) {
    case InitRule::Kind::kNormal:
      return std::fma(job.scale, static_cast<double>(standard_normal(job.quantiles, bits)),
                      job.shift);
    case InitRule::Kind::kUniform:
      return std::fma(job.scale, bits * 0x1p-32, job.shift);  // bits * 2^-32 is exact
    case InitRule::Kind::kRandInt:
      return static_cast<double>((std::uint64_t{bits} * job.int_high) >> 32);
    case InitRule::Kind::kCustom:
      break;  // fill_input hands custom rules to their own function before any job exists
  }
  return 0;
}

template <typename T, typename Convert>
void fill_span_typed(const FillJob& job, std::int64_t first, std::int64_t count, T* out,
                     Convert convert) {
  const std::int64_t end = first + count;
  for (std::int64_t b = first / 4; 4 * b < end; ++b) {
    const PhiloxBlock bits =
        philox4x32_10(philox_counter(static_cast<std::uint64_t>(b), job.stream), job.key);
    for (std::int64_t w = 0; w < 4 && 4 * b + w < end; ++w)
      out[4 * b + w - first] = convert(draw(job, bits[static_cast<std::size_t>(w)]));
  }
}

// Values per work item: a multiple of 4 (a Philox block) and of every vector length, large enough
// that a work item's setup (one dispatch, ten key vectors) costs nothing, small enough that two
// threads split even a 1 MB tensor.
constexpr std::int64_t kTileValues = std::int64_t{1} << 16;

using SpanFunction = void (*)(const FillJob&, std::int64_t, std::int64_t, void*);

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// The tiles are split over threads that are joined before this returns, not over an OpenMP team:
// kbench draws fresh inputs right before every timed call, and an OpenMP runtime keeps its team
// spinning for milliseconds after a parallel region (libgomp's default is 300,000 pause
// iterations, 70% of a CPU in kbench's process on the AMX Xeon), so the worker, timed at two
// threads on two CPUs, shared one of them with kbench: 8p's baseline measured 2.2 ms there against
// 1.5 ms for the same calls in a quiet process. A joined thread takes nothing.
void fill_tiles(const FillJob& job, kb_tensor& t, SpanFunction span) {
  const std::int64_t n = kb_numel(&t);
  const std::int64_t tiles = (n + kTileValues - 1) / kTileValues;
  const std::size_t element_bytes = dtype_size(t.dtype);
  char* const data = static_cast<char*>(t.data);
  const auto fill_range = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t tile = begin; tile < end; ++tile) {
      const std::int64_t first = tile * kTileValues;
      span(job, first, std::min(kTileValues, n - first),
           data + static_cast<std::size_t>(first) * element_bytes);
    }
  };
  const std::int64_t parts = std::clamp<std::int64_t>(tiles, 1, usable_cpus());
  const auto part_start = [&](std::int64_t part) { return part * tiles / parts; };
  std::vector<std::jthread> helpers;  // joined on return
  for (std::int64_t part = 1; part < parts; ++part) {
    try {
      helpers.emplace_back(fill_range, part_start(part), part_start(part + 1));
    } catch (const std::system_error&) {  // no thread to be had: this one fills the rest
      fill_range(part_start(part), tiles);
      break;
    }
  }
  fill_range(0, part_start(1));
}

}  // namespace

const float* normal_quantiles() {
  return quantile_table().data();
}

FillJob make_fill_job(const InitRule& rule, std::uint64_t seed, std::uint32_t stream,
                      kb_dtype dtype) {
  constexpr std::int64_t kMaxI32High = std::int64_t{1} << 31;
  if (rule.kind == InitRule::Kind::kRandInt && dtype == KB_I32 &&
      (rule.int_high < 0 || rule.int_high > kMaxI32High))
    throw std::invalid_argument("randint bound " + std::to_string(rule.int_high) +
                                " for an i32 tensor is outside [0, 2^31]");
  FillJob job;
  job.kind = rule.kind;
  job.dtype = dtype;
  job.scale = rule.scale;
  job.shift = rule.shift;
  job.int_high = static_cast<std::uint64_t>(rule.int_high);
  job.key = philox_key(seed);
  job.stream = stream;
  job.quantiles = normal_quantiles();
  return job;
}

void fill_span_scalar(const FillJob& job, std::int64_t first, std::int64_t count, void* out) {
  switch (job.dtype) {
    case KB_BF16:
      fill_span_typed(job, first, count, static_cast<bf16_t*>(out),
                      [](double v) { return f32_to_bf16(static_cast<float>(v)); });
      break;
    case KB_F32:
      fill_span_typed(job, first, count, static_cast<float*>(out),
                      [](double v) { return static_cast<float>(v); });
      break;
    case KB_I32:
      fill_span_typed(job, first, count, static_cast<std::int32_t*>(out),
                      [](double v) { return static_cast<std::int32_t>(v); });
      break;
  }
}

void fill_input_scalar(const InitRule& rule, std::uint64_t seed, std::uint32_t stream,
                       kb_tensor& t) {
  if (rule.kind == InitRule::Kind::kCustom) return rule.custom(seed, stream, t);
  fill_tiles(make_fill_job(rule, seed, stream, t.dtype), t, fill_span_scalar);
}

}  // namespace input_gen_detail

std::optional<double> typical_value(const InitRule& rule) {
  if (rule.scale == 0) return std::nullopt;
  switch (rule.kind) {
    case InitRule::Kind::kNormal:
      return rule.shift;
    case InitRule::Kind::kUniform:
      return rule.shift + rule.scale / 2;
    case InitRule::Kind::kRandInt:
    case InitRule::Kind::kCustom:
      return std::nullopt;
  }
  return std::nullopt;
}

void fill_input(const InitRule& rule, std::uint64_t seed, std::uint32_t stream, kb_tensor& t) {
  if (rule.kind == InitRule::Kind::kCustom) return rule.custom(seed, stream, t);
  input_gen_detail::fill_tiles(input_gen_detail::make_fill_job(rule, seed, stream, t.dtype), t,
                               input_gen_detail::fill_span_simd);
}

}  // namespace kbench
