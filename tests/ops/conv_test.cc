// The convolution block (ops/conv.h) against a direct double-precision loop at edge shapes:
// channel counts of 1, odd, one under and over oneDNN's 16-channel block, odd spatial extents,
// 2-D and 3-D, strided and padded transposed convolutions, each post-op, both output layouts and
// dtypes, on every path this CPU runs.
#include "ops/conv.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "core/bf16.h"
#include "ops/library_calls.h"

namespace kbench::ops {
namespace {

struct Case {
  std::string name;
  ConvGeometry g;
};

std::vector<Case> cases() {
  return {
      {"2d 1->1 k3", {1, 1, 1, {5, 7}, {3, 3}, {}, {}, false}},
      {"2d 3->5 k3 odd", {2, 3, 5, {9, 11}, {3, 3}, {}, {}, false}},
      {"2d 8->64 k3 (39k/46k channels)", {2, 8, 64, {13, 10}, {3, 3}, {}, {}, false}},
      {"2d 15->17 k3 block edges", {1, 15, 17, {8, 9}, {3, 3}, {}, {}, false}},
      {"2d 17->16 k1", {3, 17, 16, {4, 5}, {1, 1}, {}, {}, false}},
      {"2d 5->7 k3 stride 2 pad 1", {2, 5, 7, {9, 8}, {3, 3}, {2, 2}, {1, 1}, false}},
      {"3d 3->24 k3 (25k channels)", {2, 3, 24, {5, 7, 6}, {3, 3, 3}, {}, {}, false}},
      {"3d 7->9 k3", {1, 7, 9, {4, 5, 6}, {3, 3, 3}, {}, {}, false}},
      {"3d transposed 5->6 k4 s2 p1", {2, 5, 6, {3, 4, 5}, {4, 4, 4}, {2, 2, 2}, {1, 1, 1}, true}},
      {"3d transposed 17->15 k4 s2 p1",
       {1, 17, 15, {2, 3, 3}, {4, 4, 4}, {2, 2, 2}, {1, 1, 1}, true}},
      {"2d transposed 3->4 k3 s2 p1", {2, 3, 4, {5, 6}, {3, 3}, {2, 2}, {1, 1}, true}},
      {"2d transposed 6->5 k4 s2 p0", {1, 6, 5, {4, 7}, {4, 4}, {2, 2}, {0, 0}, true}},
      {"2d transposed 4->3 k4 s2 p2", {2, 4, 3, {5, 4}, {4, 4}, {2, 2}, {2, 2}, true}},
      {"3d transposed 3->18 k2 s2 p0",
       {1, 3, 18, {3, 2, 5}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, true}},
  };
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (const std::int64_t x : v) p *= x;
  return p;
}

// Spatial extents padded to three (D = 1 for 2-D).
std::vector<std::int64_t> three(const std::vector<std::int64_t>& v, std::int64_t fill) {
  std::vector<std::int64_t> out(3 - v.size(), fill);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

double apply(const ConvPostOp& op, double y, std::int64_t channel) {
  switch (op.kind) {
    case ConvPostOp::Kind::kRelu:
      return y > 0 ? y : 0;
    case ConvPostOp::Kind::kGeluTanh:
      return 0.5 * y * (1 + std::tanh(std::sqrt(2 / M_PI) * (y + 0.044715 * y * y * y)));
    case ConvPostOp::Kind::kGeluErf:
      return 0.5 * y * (1 + std::erf(y / std::sqrt(2.0)));
    case ConvPostOp::Kind::kTanh:
      return std::tanh(y);
    case ConvPostOp::Kind::kMish:
      return y * std::tanh(std::log1p(std::exp(y)));
    case ConvPostOp::Kind::kHardSwish:
      return y * std::clamp(y + 3, 0.0, 6.0) / 6;
    case ConvPostOp::Kind::kAddPerChannel:
      return y + op.values[channel];
    case ConvPostOp::Kind::kMulPerChannel:
      return y * op.values[channel];
    case ConvPostOp::Kind::kLinear:
      return op.alpha * y + op.beta;
  }
  return y;
}

// The textbook sums in double, output plain NC(D)HW. Transposed: out[o] += x[i] w[k] where
// o = i * s - p + k (PyTorch's ConvTranspose, weights (I, O, k...)).
std::vector<double> direct(const ConvGeometry& g, const std::vector<float>& x,
                           const std::vector<float>& w, const ConvEpilogue& e) {
  const auto in = three(g.in_spatial, 1), k = three(g.kernel, 1);
  const auto s =
      three(g.stride.empty() ? std::vector<std::int64_t>(g.in_spatial.size(), 1) : g.stride, 1);
  const auto p =
      three(g.padding.empty() ? std::vector<std::int64_t>(g.in_spatial.size(), 0) : g.padding, 0);
  const auto out = three(conv_output_spatial(g), 1);
  const std::int64_t ci_n = g.in_channels, co_n = g.out_channels;
  std::vector<double> y(static_cast<std::size_t>(g.batch * co_n * product(out)), 0.0);
  auto y_at = [&](std::int64_t n, std::int64_t co, std::int64_t od, std::int64_t oh,
                  std::int64_t ow) -> double& {
    return y[static_cast<std::size_t>((((n * co_n + co) * out[0] + od) * out[1] + oh) * out[2] +
                                      ow)];
  };
  for (std::int64_t n = 0; n < g.batch; ++n)
    for (std::int64_t co = 0; co < co_n; ++co)
      for (std::int64_t ci = 0; ci < ci_n; ++ci)
        for (std::int64_t kd = 0; kd < k[0]; ++kd)
          for (std::int64_t kh = 0; kh < k[1]; ++kh)
            for (std::int64_t kw = 0; kw < k[2]; ++kw) {
              const std::int64_t w_index =
                  g.transposed ? (((ci * co_n + co) * k[0] + kd) * k[1] + kh) * k[2] + kw
                               : (((co * ci_n + ci) * k[0] + kd) * k[1] + kh) * k[2] + kw;
              const double wv = w[static_cast<std::size_t>(w_index)];
              for (std::int64_t id = 0; id < in[0]; ++id)
                for (std::int64_t ih = 0; ih < in[1]; ++ih)
                  for (std::int64_t iw = 0; iw < in[2]; ++iw) {
                    const double xv = x[static_cast<std::size_t>(
                        (((n * ci_n + ci) * in[0] + id) * in[1] + ih) * in[2] + iw)];
                    std::int64_t o[3];
                    const std::int64_t i3[3] = {id, ih, iw}, k3[3] = {kd, kh, kw};
                    bool inside = true;
                    for (int a = 0; a < 3; ++a) {
                      if (g.transposed) {
                        o[a] = i3[a] * s[a] - p[a] + k3[a];
                      } else {
                        // Forward: i = o * s - p + k, so o = (i + p - k) / s when divisible.
                        const std::int64_t num = i3[a] + p[a] - k3[a];
                        if (num < 0 || num % s[a] != 0) {
                          inside = false;
                          break;
                        }
                        o[a] = num / s[a];
                      }
                      inside = inside && o[a] >= 0 && o[a] < out[a];
                    }
                    if (inside) y_at(n, co, o[0], o[1], o[2]) += xv * wv;
                  }
            }
  const std::int64_t plane = product(out);
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::int64_t channel = static_cast<std::int64_t>(i) / plane % co_n;
    if (e.bias) y[i] += e.bias[channel];
    for (const ConvPostOp& op : e.post_ops) y[i] = apply(op, y[i], channel);
  }
  return y;
}

std::vector<float> random_bf16_values(std::size_t n, double scale, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<float> v(n);
  for (float& x : v) x = round_to_bf16(static_cast<float>(normal(rng)));
  return v;
}

std::vector<bf16_t> to_bf16(const std::vector<float>& v) {
  std::vector<bf16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = f32_to_bf16(v[i]);
  return out;
}

// Output value at plain index i (n, c, spatial) from a buffer in `layout`.
float value_at(const std::vector<float>& out, ConvLayout layout, std::size_t i, std::int64_t c_n,
               std::int64_t plane) {
  if (layout == ConvLayout::kPlain) return out[i];
  const std::int64_t idx = static_cast<std::int64_t>(i);
  const std::int64_t n = idx / (c_n * plane), c = idx / plane % c_n, s = idx % plane;
  return out[static_cast<std::size_t>((n * plane + s) * c_n + c)];
}

struct Epilogues {
  std::string name;
  bool bias;
  std::vector<ConvPostOp::Kind> kinds;
};

// oneDNN has bf16 convolutions from avx512_core up (native from avx512_core_bf16, emulated below
// it); with AVX2 alone it has none, and conv() takes the f32 path.
bool onednn_has_bf16_conv() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512_core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (isa & avx512_core) == avx512_core;
}

void check(ConvPath path, const Case& c, const Epilogues& ep, ConvLayout layout, kb_dtype src_type,
           kb_dtype dst_type, TransposedMethod method = TransposedMethod::kAuto) {
  const ConvGeometry& g = c.g;
  const std::int64_t plane = product(conv_output_spatial(g));
  const std::size_t x_n = static_cast<std::size_t>(g.batch * g.in_channels * product(g.in_spatial));
  const std::size_t w_n =
      static_cast<std::size_t>(g.out_channels * g.in_channels * product(g.kernel));
  const std::vector<float> x = random_bf16_values(x_n, 1.0, 1);
  const std::vector<float> w = random_bf16_values(w_n, 0.3, 2);
  const std::vector<float> bias =
      random_bf16_values(static_cast<std::size_t>(g.out_channels), 0.5, 3);
  const std::vector<float> channel_values =
      random_bf16_values(static_cast<std::size_t>(g.out_channels), 1.0, 4);
  ConvEpilogue e;
  if (ep.bias) e.bias = bias.data();
  for (const ConvPostOp::Kind kind : ep.kinds) {
    ConvPostOp op{kind, channel_values.data()};
    if (kind == ConvPostOp::Kind::kLinear) op.alpha = 0.5f, op.beta = 0.25f;
    e.post_ops.push_back(op);
  }
  const std::vector<double> truth = direct(g, x, w, e);

  const std::vector<bf16_t> x16 = to_bf16(x), w16 = to_bf16(w);
  const void* x_data = src_type == KB_BF16 ? static_cast<const void*>(x16.data()) : x.data();
  const void* w_data = src_type == KB_BF16 ? static_cast<const void*>(w16.data()) : w.data();
  std::vector<float> out(truth.size());
  std::vector<bf16_t> out16(truth.size());
  void* dst = dst_type == KB_BF16 ? static_cast<void*>(out16.data()) : out.data();
  // The stride-phase split applies where the kernel is a multiple of the stride.
  bool phases_apply = true;
  for (std::size_t a = 0; a < g.kernel.size(); ++a)
    phases_apply &= g.kernel[a] % (g.stride.empty() ? 1 : g.stride[a]) == 0;
  const bool ran =
      conv_on_path(path, g, x_data, src_type, w_data, src_type, dst, dst_type, layout, e, method);
  if ((method == TransposedMethod::kStridePhases && !phases_apply) ||
      (path == ConvPath::kOnednnBf16 && !onednn_has_bf16_conv())) {
    EXPECT_FALSE(ran) << c.name;
    return;
  }
  ASSERT_TRUE(ran) << c.name;
  if (dst_type == KB_BF16)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_f32(out16[i]);

  // Products of bf16 values are exact in f32; the sums' rounding is ~taps * 2^-24 * sum |terms|,
  // bounded loosely by 1e-4 relative to the largest output; a bf16 store adds 2^-9 relative.
  double scale = 0;
  for (const double v : truth) scale = std::max(scale, std::abs(v));
  const double rel = dst_type == KB_BF16 ? 1.0 / 256 : 0.0;
  std::size_t worst = 0;
  double worst_excess = -1;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const double got = value_at(out, layout, i, g.out_channels, plane);
    const double bound = 1e-4 * scale + rel * std::abs(truth[i]) + 1e-6;
    const double excess = std::abs(got - truth[i]) - bound;
    if (excess > worst_excess) worst_excess = excess, worst = i;
  }
  EXPECT_LE(worst_excess, 0.0) << c.name << " / " << ep.name << " on " << conv_path_name(path)
                               << ", layout " << static_cast<int>(layout) << ", dst "
                               << (dst_type == KB_BF16 ? "bf16" : "f32") << ": element " << worst
                               << " is " << value_at(out, layout, worst, g.out_channels, plane)
                               << ", expected " << truth[worst];
}

const std::vector<Epilogues>& epilogue_sets() {
  static const std::vector<Epilogues> sets = {
      {"none", false, {}},
      {"bias relu add", true, {ConvPostOp::Kind::kRelu, ConvPostOp::Kind::kAddPerChannel}},
      {"bias mish tanh", true, {ConvPostOp::Kind::kMish, ConvPostOp::Kind::kTanh}},
      {"bias gelu_tanh linear", true, {ConvPostOp::Kind::kGeluTanh, ConvPostOp::Kind::kLinear}},
      {"gelu_erf hardswish mul",
       false,
       {ConvPostOp::Kind::kGeluErf, ConvPostOp::Kind::kHardSwish,
        ConvPostOp::Kind::kMulPerChannel}},
  };
  return sets;
}

TEST(Conv, MatchesDirectLoopOnEveryPath) {
  for (const ConvPath path : {ConvPath::kOnednnF32, ConvPath::kOnednnBf16}) {
    for (const Case& c : cases()) {
      for (const ConvLayout layout : {ConvLayout::kPlain, ConvLayout::kChannelsLast}) {
        for (const kb_dtype dst : {KB_F32, KB_BF16})
          check(path, c, epilogue_sets()[1], layout, KB_BF16, dst);
      }
      check(path, c, epilogue_sets()[0], ConvLayout::kPlain, KB_F32, KB_F32);
    }
  }
}

// Both ways of running a transposed convolution, each layout and output dtype.
TEST(Conv, TransposedMethodsMatchDirectLoop) {
  for (const TransposedMethod method :
       {TransposedMethod::kStridePhases, TransposedMethod::kDeconvolution}) {
    for (const Case& c : cases()) {
      if (!c.g.transposed) continue;
      for (const ConvLayout layout : {ConvLayout::kPlain, ConvLayout::kChannelsLast})
        for (const kb_dtype dst : {KB_F32, KB_BF16})
          check(conv_default_path(), c, epilogue_sets()[1], layout, KB_BF16, dst, method);
      check(ConvPath::kOnednnF32, c, epilogue_sets()[2], ConvLayout::kPlain, KB_F32, KB_F32,
            method);
    }
  }
}

TEST(Conv, EveryPostOp) {
  for (const Case& c : {cases()[2], cases()[6], cases()[8]})
    for (const Epilogues& ep : epilogue_sets())
      check(conv_default_path(), c, ep, ConvLayout::kPlain, KB_BF16, KB_F32);
}

TEST(Conv, DefaultEntryPointRuns) {
  const Case c = cases()[1];
  std::vector<bf16_t> x(static_cast<std::size_t>(2 * 3 * 9 * 11), f32_to_bf16(1.0f));
  std::vector<bf16_t> w(static_cast<std::size_t>(5 * 3 * 9), f32_to_bf16(0.5f));
  std::vector<float> y(static_cast<std::size_t>(2 * 5 * 7 * 9));
  conv(c.g, x.data(), KB_BF16, w.data(), KB_BF16, y.data(), KB_F32, ConvLayout::kPlain);
  for (const float v : y) ASSERT_FLOAT_EQ(v, 3 * 9 * 0.5f);
  std::cout << "[conv] default path on this CPU: " << conv_path_name(conv_default_path()) << "\n";
}

// conv() runs a call on the path the library plan names for it, whatever the default. Observed
// through f32 inputs: the bf16 path rounds them to bf16, the f32 path keeps them.
TEST(Conv, TakesThePathTheLibraryPlanNamesForTheCall) {
  const ConvGeometry g = cases()[1].g;  // 2 x 3 x 9 x 11 -> 5, 3 x 3 taps
  const float input = 1.0f + 0x1p-10f;  // not a bf16: rounds to 1
  const std::vector<float> x(static_cast<std::size_t>(2 * 3 * 9 * 11), input);
  const std::vector<float> w(static_cast<std::size_t>(5 * 3 * 9), 1.0f);
  std::vector<float> y(static_cast<std::size_t>(2 * 5 * 7 * 9));
  const ConvCall call{g, KB_F32, KB_F32, KB_F32, ConvLayout::kPlain, omp_get_max_threads()};
  const auto conv_under_plan = [&](const std::string& plan) {
    set_library_plan(plan);
    conv(g, x.data(), KB_F32, w.data(), KB_F32, y.data(), KB_F32, ConvLayout::kPlain);
    set_library_plan("");
    return y[0];
  };
  const float taps = 3 * 9;
  EXPECT_FLOAT_EQ(conv_under_plan(call.key() + "=onednn_f32"), taps * input);
  // Where this CPU's oneDNN runs bf16 convolutions at all.
  if (conv_on_path(ConvPath::kOnednnBf16, g, x.data(), KB_F32, w.data(), KB_F32, y.data(), KB_F32,
                   ConvLayout::kPlain)) {
    EXPECT_FLOAT_EQ(conv_under_plan(call.key() + "=onednn_bf16"), taps);
    // Another call's entry leaves this one on the default path.
    ConvCall other = call;
    other.threads += 1;
    EXPECT_FLOAT_EQ(conv_under_plan(other.key() + "=onednn_f32"),
                    conv_default_path() == ConvPath::kOnednnBf16 ? taps : taps * input);
  } else {
    std::cout << "[conv] no bf16 convolution on this CPU: the plan's bf16 entry not run\n";
  }
}

// The library plan hands its GEMM entries to the GEMM plan and keeps the convolutions'.
TEST(Conv, LibraryPlanSplitsGemmAndConvolutionEntries) {
  const ConvCall call{cases()[0].g, KB_BF16, KB_BF16, KB_F32, ConvLayout::kChannelsLast, 1};
  set_library_plan("8x8x8:nn:bf16:t1=onednn_bf16;" + call.key() + "=onednn_f32");
  EXPECT_EQ(gemm_plan_encoded(), "8x8x8:nn:bf16:t1=onednn_bf16");
  EXPECT_EQ(planned_conv_path(call), ConvPath::kOnednnF32);
  set_library_plan(call.key() + "=onednn_bf16");
  EXPECT_EQ(planned_conv_path(call), ConvPath::kOnednnBf16);
  EXPECT_EQ(gemm_plan_encoded(), "");
  EXPECT_THROW(set_library_plan(call.key() + "=cudnn"), std::invalid_argument);
  set_library_plan("");
  EXPECT_EQ(planned_conv_path(call), conv_default_path());
}

// The references' shared double loop (conv_reference) against this file's own.
TEST(Conv, ReferenceMatchesDirectLoop) {
  for (const Case& c : cases()) {
    const ConvGeometry& g = c.g;
    const std::vector<float> x = random_bf16_values(
        static_cast<std::size_t>(g.batch * g.in_channels * product(g.in_spatial)), 1.0, 5);
    const std::vector<float> w = random_bf16_values(
        static_cast<std::size_t>(g.out_channels * g.in_channels * product(g.kernel)), 0.3, 6);
    const std::vector<double> truth = direct(g, x, w, {});
    const std::vector<double> got = conv_reference(g, to_bf16(x).data(), to_bf16(w).data());
    ASSERT_EQ(got.size(), truth.size()) << c.name;
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], truth[i], 1e-9 * (1 + std::abs(truth[i]))) << c.name << " element " << i;
  }
}

TEST(Conv, FlopsAndExtents) {
  const ConvGeometry g{128, 64, 128, {128, 128}, {3, 3}, {}, {}, false};
  EXPECT_EQ(conv_output_spatial(g), (std::vector<std::int64_t>{126, 126}));
  EXPECT_DOUBLE_EQ(conv_direct_flops(g), 299649466368.0);  // 18k's flops_full
  const ConvGeometry t{32, 32, 64, {16, 32, 32}, {4, 4, 4}, {2, 2, 2}, {1, 1, 1}, true};
  EXPECT_EQ(conv_output_spatial(t), (std::vector<std::int64_t>{32, 64, 64}));
}

// With every input and weight 1, each output sums one 1 per live tap, so the outputs add up to
// the live multiply-adds: an independent count of what conv_live_flops computes per axis.
TEST(Conv, LiveFlopsCountTheTapsThatMeetAnInputElement) {
  for (const Case& c : cases()) {
    const ConvGeometry& g = c.g;
    const std::vector<bf16_t> x(
        static_cast<std::size_t>(g.batch * g.in_channels * product(g.in_spatial)),
        f32_to_bf16(1.0f));
    const std::vector<bf16_t> w(
        static_cast<std::size_t>(g.out_channels * g.in_channels * product(g.kernel)),
        f32_to_bf16(1.0f));
    double live_macs = 0;
    for (const double y : conv_reference(g, x.data(), w.data())) live_macs += y;
    EXPECT_DOUBLE_EQ(conv_live_flops(g), 2 * live_macs) << c.name;
    // Every tap of an unpadded forward conv meets an input element; the direct count of a padded
    // one includes taps on the padding, and that of a transposed one (stride 2 in every case here)
    // the taps on its dilated form's zeros.
    const bool all_live = !g.transposed && g.padding_at(0) == 0;
    EXPECT_EQ(conv_live_flops(g) == conv_direct_flops(g), all_live) << c.name;
  }
  // 28k at full size: 4 taps per input element and axis, 3 at either end.
  const ConvGeometry t{32, 32, 64, {16, 32, 32}, {4, 4, 4}, {2, 2, 2}, {1, 1, 1}, true};
  EXPECT_DOUBLE_EQ(conv_live_flops(t), 2.0 * 32 * 32 * 64 * 62 * 126 * 126);
  EXPECT_NEAR(conv_live_flops(t) / conv_direct_flops(t), 0.125, 0.01);
}

// The group statistics against double sums, on one thread and on two (rows split in ranges whose
// partial sums are added in thread order), at a ragged channel count and enough rows to split.
TEST(ChannelGroupStats, MatchDoubleSumsOnOneAndTwoThreads) {
  constexpr std::size_t kPixels = 5003, kChannels = 24, kGroups = 4;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  std::vector<float> y(kPixels * kChannels);
  for (float& v : y) v = normal(rng);
  const std::size_t per_group = kChannels / kGroups;
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    ChannelGroupStats stats;
    channel_group_stats(y.data(), kPixels, kChannels, kGroups, 1e-5, stats);
    omp_set_num_threads(saved);
    for (std::size_t g = 0; g < kGroups; ++g) {
      double sum = 0, squares = 0;
      for (std::size_t p = 0; p < kPixels; ++p)
        for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c)
          sum += y[p * kChannels + c];
      const double mean = sum / static_cast<double>(kPixels * per_group);
      for (std::size_t p = 0; p < kPixels; ++p)
        for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c)
          squares += (y[p * kChannels + c] - mean) * (y[p * kChannels + c] - mean);
      const double inv_std =
          1.0 / std::sqrt(squares / static_cast<double>(kPixels * per_group) + 1e-5);
      EXPECT_NEAR(stats.mean[g * per_group], mean, 1e-4);
      EXPECT_NEAR(stats.inv_std[g], inv_std, 1e-4 * inv_std);
      for (std::size_t c = g * per_group; c < (g + 1) * per_group; ++c) {
        double channel = 0;
        for (std::size_t p = 0; p < kPixels; ++p) channel += y[p * kChannels + c];
        EXPECT_NEAR(stats.sums[c], channel, 1e-3 * std::sqrt(static_cast<double>(kPixels)) * 2.0);
      }
    }
  }
}

// The GELU pool's channel sums against double GELU sums, on one thread and on two, at a channel
// count with a ragged vector (24) and enough rows to split; the sums add onto what `sums` held.
TEST(AddGeluRows, MatchDoubleGeluSumsOnOneAndTwoThreads) {
  constexpr std::size_t kPixels = 5003, kChannels = 24;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> y(kPixels * kChannels);
  for (float& v : y) v = normal(rng);
  for (const int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> sums(kChannels, 1.0f);
    add_gelu_rows(y.data(), kPixels, kChannels, sums.data());
    omp_set_num_threads(saved);
    for (std::size_t c = 0; c < kChannels; ++c) {
      double want = 1.0;
      for (std::size_t p = 0; p < kPixels; ++p) {
        const double v = y[p * kChannels + c];
        want += 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
      }
      EXPECT_NEAR(sums[c], want, 1e-5 * static_cast<double>(kPixels)) << "channel " << c;
    }
  }
}

}  // namespace
}  // namespace kbench::ops
