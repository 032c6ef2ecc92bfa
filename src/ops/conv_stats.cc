// The passes the conv baselines run over a conv's f32 output: sums and squared deviations of a row
// in sixteen lanes, per-channel sums over the rows of a channels-last block (Highway), and the
// group statistics built on them.
#include <hwy/highway.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "ops/conv.h"
#include "ops/xla_tanh-inl.h"

namespace kbench::ops {

namespace hn = hwy::HWY_NAMESPACE;

// Sixteen independent lanes: the compiler vectorizes the loop without reassociating a single sum.
constexpr std::size_t kLanes = 16;

float fold(float* lanes) {
  for (std::size_t width = kLanes / 2; width > 0; width /= 2)
    for (std::size_t i = 0; i < width; ++i) lanes[i] += lanes[i + width];
  return lanes[0];
}

float sum_f32(const float* x, std::size_t n) {
  float lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) lanes[l] += x[i + l];
  for (; i < n; ++i) lanes[i % kLanes] += x[i];
  return fold(lanes);
}

float sum_squared_deviations(const float* x, std::size_t n, float shift) {
  float lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) {
      const float d = x[i + l] - shift;
      lanes[l] += d * d;
    }
  for (; i < n; ++i) {
    const float d = x[i] - shift;
    lanes[i % kLanes] += d * d;
  }
  return fold(lanes);
}

namespace {

// Column sums of a (count x width) block, `kBlock` vectors of channels at a time held in
// registers while the rows stream past (a channels-last tensor is read once per block of
// kBlock * lanes channels, i.e. once for the suite's 64-channel outputs with AVX-512), the last
// partial vector through masked loads. `term` maps (value, shift) to the summed quantity.
template <class Term>
void add_columns(const float* x, std::size_t count, std::size_t width, std::size_t stride,
                 const float* shift, float* sums, Term term) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  constexpr std::size_t kBlock = 4;
  std::size_t c = 0;
  for (; c + kBlock * lanes <= width; c += kBlock * lanes) {
    hn::Vec<decltype(d)> acc[kBlock], sh[kBlock];
    for (std::size_t b = 0; b < kBlock; ++b) {
      acc[b] = hn::Zero(d);
      sh[b] = shift ? hn::LoadU(d, shift + c + b * lanes) : hn::Zero(d);
    }
    for (std::size_t r = 0; r < count; ++r)
      for (std::size_t b = 0; b < kBlock; ++b)
        acc[b] = hn::Add(acc[b], term(d, hn::LoadU(d, x + r * stride + c + b * lanes), sh[b]));
    for (std::size_t b = 0; b < kBlock; ++b)
      hn::StoreU(hn::Add(hn::LoadU(d, sums + c + b * lanes), acc[b]), d, sums + c + b * lanes);
  }
  for (; c < width; c += lanes) {
    const std::size_t n = std::min(lanes, width - c);
    const auto mask = hn::FirstN(d, n);
    const auto sh = shift ? hn::MaskedLoad(mask, d, shift + c) : hn::Zero(d);
    auto acc = hn::Zero(d);
    for (std::size_t r = 0; r < count; ++r)
      acc = hn::Add(
          acc, hn::IfThenElseZero(mask, term(d, hn::MaskedLoad(mask, d, x + r * stride + c), sh)));
    HWY_ALIGN float lanes_out[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(acc, d, lanes_out);
    for (std::size_t i = 0; i < n; ++i) sums[c + i] += lanes_out[i];
  }
}

// `add(first, count, partial)` over the `pixels` rows split into contiguous ranges over the
// threads, each adding into its own partial sums, which are then added into `sums` in thread order
// (the same sums for the same thread count). Below kMinRowsPerThread rows per thread, one range.
constexpr std::size_t kMinRowsPerThread = 1024;

template <class Add>
void add_rows_over_threads(std::size_t pixels, std::size_t channels, float* sums, Add add) {
  const auto threads = static_cast<std::size_t>(std::clamp<std::size_t>(
      pixels / kMinRowsPerThread, 1, static_cast<std::size_t>(omp_get_max_threads())));
  if (threads == 1) {
    add(0, pixels, sums);
    return;
  }
  std::vector<float> partial(threads * channels, 0.0f);
#pragma omp parallel num_threads(static_cast <int>(threads))
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto team = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t first = pixels * t / team, end = pixels * (t + 1) / team;
    add(first, end - first, partial.data() + t * channels);
  }
  for (std::size_t t = 0; t < threads; ++t)
    for (std::size_t c = 0; c < channels; ++c) sums[c] += partial[t * channels + c];
}

}  // namespace

void add_rows(const float* x, std::size_t count, std::size_t width, std::size_t stride,
              float* sums) {
  add_columns(x, count, width, stride, nullptr, sums, [](auto, auto v, auto) { return v; });
}

void add_squared_deviation_rows(const float* x, std::size_t count, std::size_t width,
                                std::size_t stride, const float* shift, float* sums) {
  add_columns(x, count, width, stride, shift, sums, [](auto, auto v, auto sh) {
    const auto dev = hn::Sub(v, sh);
    return hn::Mul(dev, dev);
  });
}

void add_gelu_rows(const float* y, std::size_t pixels, std::size_t channels, float* sums) {
  add_rows_over_threads(pixels, channels, sums,
                        [&](std::size_t first, std::size_t rows, float* out) {
                          add_columns(y + first * channels, rows, channels, channels, nullptr, out,
                                      [](auto d, auto v, auto) { return gelu_tanh_lanes(d, v); });
                        });
}

void channel_group_stats(const float* y, std::size_t pixels, std::size_t channels,
                         std::size_t groups, double eps, ChannelGroupStats& stats) {
  const std::size_t per_group = channels / groups;
  const double count = static_cast<double>(per_group * pixels);
  stats.sums.assign(channels, 0.0f);
  stats.mean.resize(channels);
  stats.squares.assign(channels, 0.0f);
  stats.inv_std.resize(groups);
  add_rows_over_threads(pixels, channels, stats.sums.data(),
                        [&](std::size_t first, std::size_t rows, float* sums) {
                          add_rows(y + first * channels, rows, channels, channels, sums);
                        });
  for (std::size_t g = 0; g < groups; ++g) {
    double group_sum = 0;
    for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c) group_sum += stats.sums[c];
    for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c)
      stats.mean[c] = static_cast<float>(group_sum / count);
  }
  add_rows_over_threads(pixels, channels, stats.squares.data(),
                        [&](std::size_t first, std::size_t rows, float* sums) {
                          add_squared_deviation_rows(y + first * channels, rows, channels, channels,
                                                     stats.mean.data(), sums);
                        });
  for (std::size_t g = 0; g < groups; ++g) {
    double group_squares = 0;
    for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c)
      group_squares += stats.squares[c];
    stats.inv_std[g] = 1.0 / std::sqrt(group_squares / count + eps);
  }
}

}  // namespace kbench::ops
