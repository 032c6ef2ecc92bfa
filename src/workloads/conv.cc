// The oneDNN convolution paths: one convolution (or deconvolution) primitive per (geometry, dtypes,
// layout, epilogue), created once per process and reused, with the bias and post-ops fused. The
// primitive chooses its own blocked layouts (format_tag::any); the call reorders the plain bf16
// input and the PyTorch-layout weights into them and the result out of them, counted in its time as
// any framework's conv call pays it.
//
// Path rule (measured, not tuned per shape): oneDNN runs bf16 convolutions natively only with
// avx512_core_bf16 or AMX; elsewhere its bf16 kernels emulate the bf16 dot products. On an Ice Lake
// core (avx512_core, no bf16; oneDNN 2.6) the emulated jit_bf16 convolution ran 3.5-4.2 GFLOP/s
// across the suite's 2-D and 3-D shapes where the f32 brgconv ran 11-42 GFLOP/s in the same
// minute, and the emulated deconvolution was no faster than f32. So: bf16 where native, else
// widen to f32 inside the reorder that oneDNN needs anyway (exact; sums are f32 either way).
#include "workloads/conv.h"

#include <hwy/highway.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>

#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "core/bf16.h"
#include "core/input_gen.h"
#include "workloads/library_calls.h"
#include "workloads/ops.h"

namespace kbench::ops {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

dt dnnl_type(kb_dtype dtype) {
  return dtype == KB_BF16 ? dt::bf16 : dt::f32;
}

std::int64_t at_or(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return i < v.size() ? v[i] : fallback;
}

tag plain_tag(std::size_t rank) {
  return rank == 4 ? tag::nchw : tag::ncdhw;
}
tag channels_last_tag(std::size_t rank) {
  return rank == 4 ? tag::nhwc : tag::ndhwc;
}
// PyTorch weights: (O, I, k...) forward; (I, O, k...) transposed, oneDNN's (O, I, k...) permuted.
tag weights_tag(std::size_t rank, bool transposed) {
  if (rank == 4) return transposed ? tag::iohw : tag::oihw;
  return transposed ? tag::iodhw : tag::oidhw;
}

dnnl::algorithm eltwise_of(ConvPostOp::Kind kind) {
  switch (kind) {
    case ConvPostOp::Kind::kRelu:
      return dnnl::algorithm::eltwise_relu;
    case ConvPostOp::Kind::kGeluTanh:
      return dnnl::algorithm::eltwise_gelu_tanh;
    case ConvPostOp::Kind::kGeluErf:
      return dnnl::algorithm::eltwise_gelu_erf;
    case ConvPostOp::Kind::kTanh:
      return dnnl::algorithm::eltwise_tanh;
    case ConvPostOp::Kind::kMish:
      return dnnl::algorithm::eltwise_mish;
    case ConvPostOp::Kind::kHardSwish:
      return dnnl::algorithm::eltwise_hardswish;
    case ConvPostOp::Kind::kLinear:
      return dnnl::algorithm::eltwise_linear;
    case ConvPostOp::Kind::kAddPerChannel:
    case ConvPostOp::Kind::kMulPerChannel:
      break;
  }
  return dnnl::algorithm::undef;
}

bool is_binary(ConvPostOp::Kind kind) {
  return kind == ConvPostOp::Kind::kAddPerChannel || kind == ConvPostOp::Kind::kMulPerChannel;
}

struct Descs {
  dnnl::memory::desc user_src, user_weights, user_dst, bias, per_channel;
};

dnnl::primitive_attr attributes(const ConvEpilogue& epilogue, const Descs& d) {
  dnnl::post_ops post_ops;
  for (const ConvPostOp& op : epilogue.post_ops) {
    if (is_binary(op.kind)) {
      post_ops.append_binary(op.kind == ConvPostOp::Kind::kAddPerChannel
                                 ? dnnl::algorithm::binary_add
                                 : dnnl::algorithm::binary_mul,
                             d.per_channel);
    } else if (op.kind == ConvPostOp::Kind::kLinear) {
      post_ops.append_eltwise(1.0f, eltwise_of(op.kind), op.alpha, op.beta);
    } else {
      post_ops.append_eltwise(1.0f, eltwise_of(op.kind), 0.0f, 0.0f);
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops);
  return attr;
}

// A created primitive with the layouts it chose.
struct Entry {
  dnnl::primitive primitive;
  dnnl::memory::desc src, weights, dst;
};

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mutex;
  // An empty optional: oneDNN cannot create this configuration on this CPU (asked once).
  std::unordered_map<std::string, std::optional<Entry>> primitives;
};

Context& context() {
  static Context c;
  return c;
}

std::string primitive_key(ConvPath path, const ConvGeometry& g, kb_dtype src_dtype,
                          kb_dtype weights_dtype, dt dst_type, bool dst_any, ConvLayout layout,
                          const ConvEpilogue& e) {
  std::string key;
  auto add = [&key](std::int64_t v) {
    key += std::to_string(v);
    key += ',';
  };
  add(static_cast<int>(path));
  for (const std::int64_t v : {g.batch, g.in_channels, g.out_channels}) add(v);
  for (const auto* v : {&g.in_spatial, &g.kernel, &g.stride, &g.padding, &g.padding_right}) {
    for (const std::int64_t x : *v) add(x);
    key += ';';
  }
  add(g.transposed);
  add(src_dtype);
  add(weights_dtype);
  add(static_cast<int>(dst_type));
  add(dst_any);
  add(static_cast<int>(layout));
  add(e.bias != nullptr);
  for (const ConvPostOp& op : e.post_ops) {
    add(static_cast<int>(op.kind));
    key += std::to_string(op.alpha) + ":" + std::to_string(op.beta) + ",";
  }
  return key;
}

// `primitive_dst` is the primitive's destination request: the user's own descriptor (written
// directly), or an f32 `any` descriptor reordered into the user's afterwards.
std::optional<Entry> make_entry(Context& ctx, ConvPath path, const ConvGeometry& g, const Descs& d,
                                const dnnl::memory::desc& primitive_dst,
                                const ConvEpilogue& epilogue) {
  const dt op_type = path == ConvPath::kOnednnBf16 ? dt::bf16 : dt::f32;
  const dnnl::memory::desc src_any(d.user_src.dims(), op_type, tag::any);
  const dnnl::memory::desc weights_any(d.user_weights.dims(), op_type, tag::any);
  const std::size_t n = g.in_spatial.size();
  dims strides(n), padding(n), padding_right(n);
  for (std::size_t i = 0; i < n; ++i) {
    strides[i] = at_or(g.stride, i, 1);
    padding[i] = at_or(g.padding, i, 0);
    padding_right[i] = at_or(g.padding_right, i, padding[i]);
  }
  const dnnl::memory::desc bias = epilogue.bias ? d.bias : dnnl::memory::desc();
  const dnnl::primitive_attr attr = attributes(epilogue, d);
  try {
    if (g.transposed) {
      const dnnl::deconvolution_forward::primitive_desc pd(
          dnnl::deconvolution_forward::desc(
              dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_any,
              weights_any, bias, primitive_dst, strides, padding, padding),
          attr, ctx.engine);
      return Entry{dnnl::deconvolution_forward(pd), pd.src_desc(), pd.weights_desc(),
                   pd.dst_desc()};
    }
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, src_any, weights_any,
                                        bias, primitive_dst, strides, padding, padding_right),
        attr, ctx.engine);
    return Entry{dnnl::convolution_forward(pd), pd.src_desc(), pd.weights_desc(), pd.dst_desc()};
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

std::optional<Entry> find_or_make(Context& ctx, const std::string& key, ConvPath path,
                                  const ConvGeometry& g, const Descs& d,
                                  const dnnl::memory::desc& primitive_dst,
                                  const ConvEpilogue& epilogue) {
  std::lock_guard lock(ctx.mutex);
  auto it = ctx.primitives.find(key);
  if (it == ctx.primitives.end())
    it = ctx.primitives.emplace(key, make_entry(ctx, path, g, d, primitive_dst, epilogue)).first;
  return it->second;
}

// Scratch for a oneDNN memory of `md` from the baselines' caching allocator.
F32Buffer scratch_for(const dnnl::memory::desc& md) {
  return F32Buffer((md.get_size() + sizeof(float) - 1) / sizeof(float));
}

bool native_bf16() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  return (isa & bf16) == bf16;
}

}  // namespace

std::vector<std::int64_t> conv_output_spatial(const ConvGeometry& g) {
  std::vector<std::int64_t> out(g.in_spatial.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t s = at_or(g.stride, i, 1), p = at_or(g.padding, i, 0), k = g.kernel[i];
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
    s[i] = at_or(g.stride, i, 1);
    p[i] = at_or(g.padding, i, 0);
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

ConvPath conv_default_path() {
  static const ConvPath path = native_bf16() ? ConvPath::kOnednnBf16 : ConvPath::kOnednnF32;
  return path;
}

const char* conv_path_name(ConvPath path) {
  return path == ConvPath::kOnednnBf16 ? "onednn_bf16" : "onednn_f32";
}

namespace {

// One primitive call: src and weights in their user descriptors, the result into `user_dst` (any
// strides: the plain or channels-last output, or one stride phase's interleaved view of it).
// Channels-last is a layout oneDNN's direct kernels write natively: the primitive is asked for the
// user's own descriptor first. Otherwise it picks its layout and its f32 result is reordered.
bool run_primitive(ConvPath path, const ConvGeometry& g, Descs d, const void* src,
                   const void* weights, void* dst, bool try_direct, const ConvEpilogue& epilogue) {
  Context& ctx = context();
  const kb_dtype src_dtype = d.user_src.data_type() == dt::bf16 ? KB_BF16 : KB_F32;
  const kb_dtype weights_dtype = d.user_weights.data_type() == dt::bf16 ? KB_BF16 : KB_F32;
  const ConvLayout layout = try_direct ? ConvLayout::kChannelsLast : ConvLayout::kPlain;
  std::optional<Entry> entry;
  if (try_direct) {
    entry = find_or_make(ctx,
                         primitive_key(path, g, src_dtype, weights_dtype, d.user_dst.data_type(),
                                       false, layout, epilogue),
                         path, g, d, d.user_dst, epilogue);
  }
  if (!entry) {
    const dnnl::memory::desc dst_any(d.user_dst.dims(), dt::f32, tag::any);
    entry = find_or_make(
        ctx, primitive_key(path, g, src_dtype, weights_dtype, dt::f32, true, layout, epilogue),
        path, g, d, dst_any, epilogue);
  }
  if (!entry) return false;

  const dnnl::engine& engine = ctx.engine;
  dnnl::stream stream(engine);
  auto memory = [&](const dnnl::memory::desc& md, const void* p) {
    return dnnl::memory(md, engine, const_cast<void*>(p));
  };
  // Each operand as the primitive reads it: as it is where the layouts agree, else reordered.
  F32Buffer src_scratch(0), weights_scratch(0), dst_scratch(0);
  auto operand = [&](const dnnl::memory::desc& user, const void* data,
                     const dnnl::memory::desc& wanted, F32Buffer& scratch) {
    dnnl::memory user_memory = memory(user, data);
    if (user == wanted) return user_memory;
    scratch = scratch_for(wanted);
    dnnl::memory reordered = memory(wanted, scratch.data());
    dnnl::reorder(user_memory, reordered).execute(stream, user_memory, reordered);
    return reordered;
  };
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, operand(d.user_src, src, entry->src, src_scratch)},
      {DNNL_ARG_WEIGHTS, operand(d.user_weights, weights, entry->weights, weights_scratch)},
  };
  const bool direct = entry->dst == d.user_dst;
  if (!direct) dst_scratch = scratch_for(entry->dst);
  dnnl::memory dst_memory =
      direct ? memory(d.user_dst, dst) : memory(entry->dst, dst_scratch.data());
  args.emplace(DNNL_ARG_DST, dst_memory);
  if (epilogue.bias) args.emplace(DNNL_ARG_BIAS, memory(d.bias, epilogue.bias));
  for (std::size_t i = 0; i < epilogue.post_ops.size(); ++i)
    if (is_binary(epilogue.post_ops[i].kind))
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                   memory(d.per_channel, epilogue.post_ops[i].values));
  // Streams are not thread-safe; kernels call conv from one thread (oneDNN threads inside).
  entry->primitive.execute(stream, args);
  if (!direct) {
    dnnl::memory user_dst = memory(d.user_dst, dst);
    dnnl::reorder(dst_memory, user_dst).execute(stream, dst_memory, user_dst);
  }
  stream.wait();
  return true;
}

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
    const std::int64_t s = at_or(g.stride, a, 1), p = at_or(g.padding, a, 0), k = g.kernel[a];
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

// The transposed convolution as its stride phases (TransposedMethod::kStridePhases).
bool run_stride_phases(ConvPath path, const ConvGeometry& g, const Descs& base, const void* src,
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
    taps[a] = g.kernel[a] / at_or(g.stride, a, 1);
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
      view_strides.push_back(axis_stride[a] * at_or(g.stride, a, 1));
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
            const std::int64_t kk =
                (*plan)[a][choice[a]].r + at_or(g.stride, a, 1) * (taps[a] - 1 - u);
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
    Descs d = base;
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

}  // namespace

bool conv_on_path(ConvPath path, const ConvGeometry& g, const void* src, kb_dtype src_dtype,
                  const void* weights, kb_dtype weights_dtype, void* dst, kb_dtype dst_dtype,
                  ConvLayout dst_layout, const ConvEpilogue& epilogue, TransposedMethod method) {
  const std::size_t spatial = g.in_spatial.size();
  if ((spatial != 2 && spatial != 3) || g.kernel.size() != spatial) return false;
  if (g.transposed && !g.padding_right.empty()) return false;
  const std::size_t rank = spatial + 2;
  dims src_dims = {g.batch, g.in_channels}, dst_dims = {g.batch, g.out_channels};
  dims weights_dims = {g.out_channels, g.in_channels}, channel_dims = {1, g.out_channels};
  const std::vector<std::int64_t> out_spatial = conv_output_spatial(g);
  for (std::size_t i = 0; i < spatial; ++i) {
    src_dims.push_back(g.in_spatial[i]);
    dst_dims.push_back(out_spatial[i]);
    weights_dims.push_back(g.kernel[i]);
    channel_dims.push_back(1);
  }
  Descs d;
  d.user_src = dnnl::memory::desc(src_dims, dnnl_type(src_dtype), plain_tag(rank));
  d.user_weights =
      dnnl::memory::desc(weights_dims, dnnl_type(weights_dtype), weights_tag(rank, g.transposed));
  d.user_dst = dnnl::memory::desc(
      dst_dims, dnnl_type(dst_dtype),
      dst_layout == ConvLayout::kPlain ? plain_tag(rank) : channels_last_tag(rank));
  d.bias = dnnl::memory::desc({g.out_channels}, dt::f32, tag::a);
  d.per_channel = dnnl::memory::desc(channel_dims, dt::f32, plain_tag(rank));

  if (g.transposed && method == TransposedMethod::kStridePhases) {
    return run_stride_phases(path, g, d, src, weights, dst, dst_dtype, dst_layout, epilogue);
  }
  // oneDNN's deconvolution writes channels-last through a reference kernel (10 s where the
  // blocked layout takes 65 ms at 28k's cpu shape): never ask it for that layout directly.
  return run_primitive(path, g, d, src, weights, dst,
                       dst_layout == ConvLayout::kChannelsLast && !g.transposed, epilogue);
}

void conv(const ConvGeometry& g, const void* src, kb_dtype src_dtype, const void* weights,
          kb_dtype weights_dtype, void* dst, kb_dtype dst_dtype, ConvLayout dst_layout,
          const ConvEpilogue& epilogue) {
  LibraryCall call;
  call.kind = LibraryCall::Kind::kConv;
  call.conv = {g, src_dtype, weights_dtype, dst_dtype, dst_layout, omp_get_max_threads()};
  note_library_call(call);
  if (conv_on_path(conv_default_path(), g, src, src_dtype, weights, weights_dtype, dst, dst_dtype,
                   dst_layout, epilogue))
    return;
  if (conv_on_path(ConvPath::kOnednnF32, g, src, src_dtype, weights, weights_dtype, dst, dst_dtype,
                   dst_layout, epilogue))
    return;
  throw std::runtime_error("oneDNN has no convolution for this configuration");
}

}  // namespace kbench::ops
