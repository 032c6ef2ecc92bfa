// The convolution's geometry and its truth: output extents, the spec's FLOPs, a double-precision
// direct convolution independent of oneDNN, and the structured input fill of the conv workloads.
#include <cstdint>
#include <vector>

#include "core/bf16.h"
#include "core/input_gen.h"
#include "ops/conv.h"

namespace kbench::ops {
std::vector<std::int64_t> conv_output_spatial(const ConvGeometry& g) {
  std::vector<std::int64_t> out(g.in_spatial.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t s = g.stride_at(i), p = g.padding_at(i), k = g.kernel[i];
    out[i] = g.transposed ? (g.in_spatial[i] - 1) * s - 2 * p + k
                          : (g.in_spatial[i] + 2 * p - k) / s + 1;
  }
  return out;
}

double conv_direct_flops(const ConvGeometry& g) {
  double flops = 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.in_channels) *
                 static_cast<double>(g.out_channels);
  const std::vector<std::int64_t> out = conv_output_spatial(g);
  for (std::size_t i = 0; i < out.size(); ++i)
    flops *= static_cast<double>(out[i]) * static_cast<double>(g.kernel[i]);
  return flops;
}

double conv_live_flops(const ConvGeometry& g) {
  double flops = 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.in_channels) *
                 static_cast<double>(g.out_channels);
  const std::vector<std::int64_t> out = conv_output_spatial(g);
  for (std::size_t axis = 0; axis < out.size(); ++axis) {
    const std::int64_t s = g.stride_at(axis), p = g.padding_at(axis);
    // A forward conv's output o reads input o s - p + k; a transposed conv's input i writes
    // output i s - p + k. A tap is live where that index lands inside its tensor.
    const std::int64_t outer = g.transposed ? g.in_spatial[axis] : out[axis];
    const std::int64_t inner = g.transposed ? out[axis] : g.in_spatial[axis];
    std::int64_t live = 0;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t k = 0; k < g.kernel[axis]; ++k) {
        const std::int64_t at = o * s - p + k;
        live += at >= 0 && at < inner;
      }
    flops *= static_cast<double>(live);
  }
  return flops;
}

std::vector<double> conv_reference(const ConvGeometry& g, const std::uint16_t* src,
                                   const std::uint16_t* weights) {
  // Extents padded to three spatial axes (a 2-D conv is a 3-D one with D = 1).
  auto three = [&](const std::vector<std::int64_t>& v, std::int64_t fill) {
    std::vector<std::int64_t> out(3, fill);
    for (std::size_t i = 0; i < v.size(); ++i) out[3 - v.size() + i] = v[i];
    return out;
  };
  const std::size_t n_sp = g.in_spatial.size();
  std::vector<std::int64_t> s(n_sp), p(n_sp);
  for (std::size_t i = 0; i < n_sp; ++i) {
    s[i] = g.stride_at(i);
    p[i] = g.padding_at(i);
  }
  const auto in = three(g.in_spatial, 1), k = three(g.kernel, 1), st = three(s, 1),
             pd = three(p, 0), out = three(conv_output_spatial(g), 1);
  const std::int64_t cin = g.in_channels, cout = g.out_channels;
  const std::int64_t in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
  const std::int64_t taps = k[0] * k[1] * k[2];
  std::vector<double> y(static_cast<std::size_t>(g.batch * cout * out_plane), 0.0);
  std::vector<double> w(static_cast<std::size_t>(cout * cin * taps));
  for (std::int64_t co = 0; co < cout; ++co)
    for (std::int64_t ci = 0; ci < cin; ++ci)
      for (std::int64_t t = 0; t < taps; ++t)
        w[static_cast<std::size_t>((co * cin + ci) * taps + t)] = bf16_to_f32(
            weights[g.transposed ? (ci * cout + co) * taps + t : (co * cin + ci) * taps + t]);
  std::vector<double> x(static_cast<std::size_t>(in_plane));
  for (std::int64_t n = 0; n < g.batch; ++n)
    for (std::int64_t ci = 0; ci < cin; ++ci) {
      for (std::int64_t i = 0; i < in_plane; ++i)
        x[static_cast<std::size_t>(i)] = bf16_to_f32(src[(n * cin + ci) * in_plane + i]);
      for (std::int64_t co = 0; co < cout; ++co) {
        double* yc = y.data() + (n * cout + co) * out_plane;
        for (std::int64_t t = 0; t < taps; ++t) {
          const std::int64_t kk[3] = {t / (k[1] * k[2]), t / k[2] % k[1], t % k[2]};
          const double wv = w[static_cast<std::size_t>((co * cin + ci) * taps + t)];
          // Each output position o meets input position i = o * s - p + k (forward), or each input
          // position i lands on o = i * s - p + k (transposed).
          for (std::int64_t a = 0; a < out[0]; ++a)
            for (std::int64_t b = 0; b < out[1]; ++b)
              for (std::int64_t c = 0; c < out[2]; ++c) {
                const std::int64_t o3[3] = {a, b, c};
                std::int64_t i3[3];
                bool inside = true;
                for (int d = 0; d < 3 && inside; ++d) {
                  if (g.transposed) {
                    const std::int64_t num = o3[d] + pd[d] - kk[d];
                    inside = num >= 0 && num % st[d] == 0 && num / st[d] < in[d];
                    i3[d] = num / st[d];
                  } else {
                    i3[d] = o3[d] * st[d] - pd[d] + kk[d];
                    inside = i3[d] >= 0 && i3[d] < in[d];
                  }
                }
                if (inside)
                  yc[(a * out[1] + b) * out[2] + c] +=
                      wv * x[static_cast<std::size_t>((i3[0] * in[1] + i3[1]) * in[2] + i3[2])];
              }
        }
      }
    }
  return y;
}

void fill_uniform_with_channel_offsets(std::uint64_t seed, std::uint32_t stream, kb_tensor& t) {
  // Streams of other inputs are their indices (< 2^16): the offsets' stream never meets one.
  constexpr std::uint32_t kOffsetStream = 0x10000;
  const std::int64_t rows = t.shape[0] * t.shape[1];
  const std::int64_t per_row = kb_numel(&t) / rows;
  std::vector<float> values(static_cast<std::size_t>(rows * per_row)),
      offsets(static_cast<std::size_t>(rows));
  kb_tensor v{values.data(), KB_F32, 1, {rows * per_row}};
  kb_tensor o{offsets.data(), KB_F32, 1, {rows}};
  fill_input(InitRule::uniform(0.0, 1.0), seed, stream, v);
  fill_input(InitRule::normal(1.0), seed, stream + kOffsetStream, o);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t i = 0; i < per_row; ++i) {
      const float x =
          values[static_cast<std::size_t>(r * per_row + i)] + offsets[static_cast<std::size_t>(r)];
      if (t.dtype == KB_BF16)
        static_cast<bf16_t*>(t.data)[r * per_row + i] = f32_to_bf16(x);
      else
        static_cast<float*>(t.data)[r * per_row + i] = x;
    }
}

}  // namespace kbench::ops
