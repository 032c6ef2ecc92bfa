// The transposed convolution as its stride phases (TransposedMethod::kStridePhases, see conv.h):
// s^dims forward convolutions over the phase kernels, each phase's channels-last result scattered
// into its interleaved output positions.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "ops/conv_internal.h"

namespace kbench::ops::detail {
namespace {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;

// One axis of one stride phase r: the outputs o = first + s j (j < count) with (o + p) mod s = r,
// computed by a forward convolution with this padding over the axis' input.
struct PhaseAxis {
  std::int64_t r, first, count, pad_left, pad_right;
};

// Every axis' phases, or nullopt where the split does not apply (k not a multiple of s, or a
// phase would need negative padding).
std::optional<std::vector<std::vector<PhaseAxis>>> phase_plan(const ConvGeometry& g) {
  const std::vector<std::int64_t> out = conv_output_spatial(g);
  std::vector<std::vector<PhaseAxis>> plan(out.size());
  for (std::size_t a = 0; a < out.size(); ++a) {
    const std::int64_t s = g.stride_at(a), p = g.padding_at(a), k = g.kernel[a];
    if (k % s != 0) return std::nullopt;
    const std::int64_t taps = k / s;
    for (std::int64_t r = 0; r < s; ++r) {
      const std::int64_t first = ((r - p) % s + s) % s;
      if (first >= out[a]) continue;
      const std::int64_t count = (out[a] - 1 - first) / s + 1;
      const std::int64_t m0 = (first + p - r) / s;
      const std::int64_t pad_left = taps - 1 - m0;
      const std::int64_t pad_right = count - g.in_spatial[a] - pad_left + taps - 1;
      if (pad_left < 0 || pad_right < 0) return std::nullopt;
      plan[a].push_back({r, first, count, pad_left, pad_right});
    }
  }
  return plan;
}

// Copies a channels-last f32 block (N, spatial..., C) of extents `dims` = (N, C, spatial...) into
// `dst` at element `offset` with element strides `strides` = (n, c, spatial...), converting to
// `dtype`. One contiguous run of C values per position; each lands at stride strides[1].
void scatter_phase(const float* src, const dims& extents, const dims& strides, char* dst,
                   std::size_t offset, kb_dtype dtype) {
  // Spatial extents and strides padded to three axes (a 2-D output has one depth plane).
  const std::size_t axes = extents.size() - 2;
  std::int64_t e[3] = {1, 1, 1}, st[3] = {0, 0, 0};
  for (std::size_t a = 0; a < axes; ++a) {
    e[3 - axes + a] = extents[2 + a];
    st[3 - axes + a] = strides[2 + a];
  }
  const std::int64_t channels = extents[1], step = strides[1];
  for (std::int64_t n = 0; n < extents[0]; ++n)
    for (std::int64_t i = 0; i < e[0]; ++i)
      for (std::int64_t j = 0; j < e[1]; ++j) {
        const std::int64_t row =
            static_cast<std::int64_t>(offset) + n * strides[0] + i * st[0] + j * st[1];
        for (std::int64_t k = 0; k < e[2]; ++k, src += channels) {
          const std::int64_t at = row + k * st[2];
          if (dtype == KB_BF16) {
            auto* to = reinterpret_cast<bf16_t*>(dst) + at;
            for (std::int64_t c = 0; c < channels; ++c) to[c * step] = f32_to_bf16(src[c]);
          } else {
            auto* to = reinterpret_cast<float*>(dst) + at;
            for (std::int64_t c = 0; c < channels; ++c) to[c * step] = src[c];
          }
        }
      }
}

}  // namespace

bool run_stride_phases(ConvPath path, const ConvGeometry& g, const ConvDescs& base, const void* src,
                       const void* weights, void* dst, kb_dtype dst_dtype, ConvLayout layout,
                       const ConvEpilogue& epilogue) {
  const std::optional<std::vector<std::vector<PhaseAxis>>> plan = phase_plan(g);
  if (!plan) return false;
  const std::size_t axes = g.in_spatial.size();
  const std::vector<std::int64_t> out = conv_output_spatial(g);
  const std::int64_t cin = g.in_channels, cout = g.out_channels;
  std::int64_t volume = 1, taps_all = 1, phase_taps = 1;
  std::vector<std::int64_t> taps(axes);
  for (std::size_t a = 0; a < axes; ++a) {
    volume *= out[a];
    taps_all *= g.kernel[a];
    taps[a] = g.kernel[a] / g.stride_at(a);
    phase_taps *= taps[a];
  }
  // Element strides of the user's output: (n, c, axes...).
  const bool plain = layout == ConvLayout::kPlain;
  std::vector<std::int64_t> axis_stride(axes);
  std::int64_t inner = plain ? 1 : cout;
  for (std::size_t a = axes; a-- > 0;) {
    axis_stride[a] = inner;
    inner *= out[a];
  }
  const std::int64_t channel_stride = plain ? volume : 1, batch_stride = cout * volume;
  const bool bf16_weights = base.user_weights.data_type() == dt::bf16;

  std::vector<std::uint16_t> phase_weights16;
  std::vector<float> phase_weights32;
  const std::size_t phase_count = static_cast<std::size_t>(cout * cin * phase_taps);
  if (bf16_weights)
    phase_weights16.resize(phase_count);
  else
    phase_weights32.resize(phase_count);

  std::vector<std::size_t> choice(axes, 0);
  while (true) {
    ConvGeometry fg{g.batch, cin, cout, g.in_spatial, taps, {}, {}, false, {}};
    dims view_dims = {g.batch, cout}, view_strides = {batch_stride, channel_stride};
    std::int64_t offset = 0;
    for (std::size_t a = 0; a < axes; ++a) {
      const PhaseAxis& ph = (*plan)[a][choice[a]];
      fg.padding.push_back(ph.pad_left);
      fg.padding_right.push_back(ph.pad_right);
      view_dims.push_back(ph.count);
      view_strides.push_back(axis_stride[a] * g.stride_at(a));
      offset += ph.first * axis_stride[a];
    }
    // Phase weights (O, I, taps...): entry (co, ci, u) = w[ci, co, r + s (taps - 1 - u)].
    for (std::int64_t co = 0; co < cout; ++co)
      for (std::int64_t ci = 0; ci < cin; ++ci)
        for (std::int64_t t = 0; t < phase_taps; ++t) {
          std::int64_t rest = t, source = 0, place = 1;
          for (std::size_t a = axes; a-- > 0;) {
            const std::int64_t u = rest % taps[a];
            rest /= taps[a];
            const std::int64_t kk = (*plan)[a][choice[a]].r + g.stride_at(a) * (taps[a] - 1 - u);
            source += kk * place;
            place *= g.kernel[a];
          }
          const std::size_t to = static_cast<std::size_t>((co * cin + ci) * phase_taps + t);
          const std::int64_t from = (ci * cout + co) * taps_all + source;
          if (bf16_weights)
            phase_weights16[to] = static_cast<const std::uint16_t*>(weights)[from];
          else
            phase_weights32[to] = static_cast<const float*>(weights)[from];
        }
    ConvDescs d = base;
    dims weights_dims = {cout, cin};
    for (const std::int64_t t : taps) weights_dims.push_back(t);
    d.user_weights = dnnl::memory::desc(weights_dims, base.user_weights.data_type(),
                                        weights_tag(axes + 2, false));
    // The phase's f32 result channels-last (brgconv writes it natively), then scattered into its
    // interleaved positions by a copy loop: oneDNN's reorder into a strided view measured 8x
    // slower than the phase's convolution.
    d.user_dst = dnnl::memory::desc(view_dims, dt::f32, channels_last_tag(axes + 2));
    F32Buffer phase_out(static_cast<std::size_t>(d.user_dst.get_size() / sizeof(float)));
    const void* w = bf16_weights ? static_cast<const void*>(phase_weights16.data())
                                 : static_cast<const void*>(phase_weights32.data());
    if (!run_primitive(path, fg, d, src, w, phase_out.data(), true, epilogue)) return false;
    scatter_phase(phase_out.data(), view_dims, view_strides, static_cast<char*>(dst),
                  static_cast<std::size_t>(offset), dst_dtype);
    std::size_t a = axes;
    while (a-- > 0) {
      if (++choice[a] < (*plan)[a].size()) break;
      choice[a] = 0;
    }
    if (a == static_cast<std::size_t>(-1)) break;
  }
  return true;
}

}  // namespace kbench::ops::detail
