// The oneDNN convolution paths: one convolution (or deconvolution) primitive per (geometry, dtypes,
// layout, epilogue), created once per process and reused, with the bias and post-ops fused. The
// primitive chooses its own blocked layouts (format_tag::any); the call reorders the plain bf16
// input and the PyTorch-layout weights into them and the result out of them, counted in its time as
// any framework's conv call pays it.
//
// Default path (where the library plan has no entry for a call): oneDNN runs bf16 convolutions
// natively only with avx512_core_bf16 or AMX; elsewhere its bf16 kernels emulate the bf16 dot
// products. On an Ice Lake core (avx512_core, no bf16; oneDNN 2.6) the emulated jit_bf16
// convolution ran 3.5-4.2 GFLOP/s across the suite's 2-D and 3-D shapes where the f32 brgconv ran
// 11-42 GFLOP/s in the same minute, and the emulated deconvolution was no faster than f32. So:
// bf16 where native, else widen to f32 inside the reorder that oneDNN needs anyway (exact; sums
// are f32 either way). A baseline's plan measures both per call (native bf16 without AMX can be
// the slower).
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "core/bf16.h"
#include "ops/buffers.h"
#include "ops/conv.h"
#include "ops/conv_internal.h"
#include "ops/library_calls.h"
#include "ops/onednn_cache.h"
#include "ops/onednn_implementations.h"
#include "ops/transpose.h"

namespace kbench::ops {
namespace detail {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

dt dnnl_type(kb_dtype dtype) {
  return dtype == KB_BF16 ? dt::bf16 : dt::f32;
}

tag plain_tag(std::size_t rank) {
  return rank == 4 ? tag::nchw : tag::ncdhw;
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

dnnl::primitive_attr attributes(const ConvEpilogue& epilogue, const ConvDescs& d) {
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

using Context = PrimitiveCache<Entry>;

Context& context() {
  static Context c;
  return c;
}

// Whether this thread's conv calls may take oneDNN's reference kernels: only conv()'s last resort,
// when no optimized kernel takes the configuration in any layout or type.
thread_local bool allow_reference_kernels = false;

std::string primitive_key(ConvPath path, const ConvGeometry& g, kb_dtype src_dtype,
                          kb_dtype weights_dtype, dt dst_type, bool dst_any, ConvLayout layout,
                          const ConvEpilogue& e) {
  std::string key = allow_reference_kernels ? "ref," : "";
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
std::optional<Entry> make_entry(Context& ctx, ConvPath path, const ConvGeometry& g,
                                const ConvDescs& d, const dnnl::memory::desc& primitive_dst,
                                const ConvEpilogue& epilogue) {
  const dt op_type = path == ConvPath::kOnednnBf16 ? dt::bf16 : dt::f32;
  const dnnl::memory::desc src_any(d.user_src.dims(), op_type, tag::any);
  const dnnl::memory::desc weights_any(d.user_weights.dims(), op_type, tag::any);
  const std::size_t n = g.in_spatial.size();
  dims strides(n), padding(n), padding_right(n);
  for (std::size_t i = 0; i < n; ++i) {
    strides[i] = g.stride_at(i);
    padding[i] = g.padding_at(i);
    padding_right[i] = g.padding_right_at(i);
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
      if (!allow_reference_kernels && is_reference_implementation(pd.impl_info_str()))
        return std::nullopt;
      note_onednn_implementation(pd.impl_info_str());
      return Entry{dnnl::deconvolution_forward(pd), pd.src_desc(), pd.weights_desc(),
                   pd.dst_desc()};
    }
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct, src_any, weights_any,
                                        bias, primitive_dst, strides, padding, padding_right),
        attr, ctx.engine);
    if (!allow_reference_kernels && is_reference_implementation(pd.impl_info_str()))
      return std::nullopt;
    note_onednn_implementation(pd.impl_info_str());
    return Entry{dnnl::convolution_forward(pd), pd.src_desc(), pd.weights_desc(), pd.dst_desc()};
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

std::optional<Entry> find_or_make(Context& ctx, const std::string& key, ConvPath path,
                                  const ConvGeometry& g, const ConvDescs& d,
                                  const dnnl::memory::desc& primitive_dst,
                                  const ConvEpilogue& epilogue) {
  return ctx.find_or_make(key,
                          [&] { return make_entry(ctx, path, g, d, primitive_dst, epilogue); });
}

// Scratch for a oneDNN memory of `md` from the baselines' caching allocator.
F32Buffer scratch_for(const dnnl::memory::desc& md) {
  return F32Buffer((md.get_size() + sizeof(float) - 1) / sizeof(float));
}

// oneDNN's reorders that change bf16 <-> f32 run a generic element loop ("simple:any") on CPUs
// without native bf16: on the AVX2 core, 141 ms for 18k's 1.7 M-element input and 340 ms for its
// 3.3 M-element output, around a 45 ms convolution. kbench changes the dtype itself (vectorized,
// across the thread budget) and leaves oneDNN only the change of layout, which it runs jitted.
bool dense(const dnnl::memory::desc& md) {
  std::size_t elements = 1;
  for (const dnnl::memory::dim extent : md.dims()) elements *= static_cast<std::size_t>(extent);
  return md.get_size() == elements * dnnl::memory::data_type_size(md.data_type());
}

// `md`'s dims and strides (a plain, unblocked layout) with elements of `type`.
dnnl::memory::desc with_type(const dnnl::memory::desc& md, dt type) {
  const dnnl_blocking_desc_t& blocking = md.data.format_desc.blocking;
  return dnnl::memory::desc(md.dims(), type,
                            dims(blocking.strides, blocking.strides + md.data.ndims));
}

// convert(start, count) over [0, n) in chunks spread across the thread budget.
template <typename Convert>
void convert_in_chunks(std::size_t n, Convert convert) {
  constexpr std::size_t kChunk = 1 << 16;
  const auto chunks = static_cast<std::int64_t>((n + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t i = 0; i < chunks; ++i) {
    const std::size_t start = static_cast<std::size_t>(i) * kChunk;
    convert(start, std::min(kChunk, n - start));
  }
}

bool native_bf16() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  return (isa & bf16) == bf16;
}

// The type of the primitive's own (blocked) result when the user's layout needs a reorder after
// it. A bf16 result for a bf16 user on a native-bf16 path: the primitive rounds its f32 sums once
// after the post-ops (to nearest even, as kbench does) and the reorder moves half the bytes.
// On 18k's cpu shape (AMX Xeon) the f32 result's reorder to NCHW took 2.2 ms of a 6.0 ms call.
// Elsewhere f32, which kbench rounds itself (oneDNN's bf16 reorders are scalar there).
dt staged_dst_type(ConvPath path, const dnnl::memory::desc& user_dst) {
  return path == ConvPath::kOnednnBf16 && native_bf16() && user_dst.data_type() == dt::bf16
             ? dt::bf16
             : dt::f32;
}

}  // namespace

tag channels_last_tag(std::size_t rank) {
  return rank == 4 ? tag::nhwc : tag::ndhwc;
}

tag weights_tag(std::size_t rank, bool transposed) {
  if (rank == 4) return transposed ? tag::iohw : tag::oihw;
  return transposed ? tag::iodhw : tag::oidhw;
}

// `from` into `to` where that is channels-last to plain of one element type, which kbench's own
// transpose does in about a third of oneDNN's reorder time (ops/transpose.h); false, with
// nothing written, for any other pair.
bool transposed_to_plain(const dnnl::memory& from, const dnnl::memory& to) {
  const dnnl::memory::desc source = from.get_desc(), target = to.get_desc();
  const dims extents = source.dims();
  const std::size_t rank = extents.size();
  if (rank < 3 || target.dims() != extents || target.data_type() != source.data_type())
    return false;
  if (!(source == dnnl::memory::desc(extents, source.data_type(), channels_last_tag(rank))) ||
      !(target == dnnl::memory::desc(extents, source.data_type(), plain_tag(rank))))
    return false;
  dnnl::memory::dim spatial = 1;
  for (std::size_t i = 2; i < rank; ++i) spatial *= extents[i];
  channels_last_to_plain(from.get_data_handle(), to.get_data_handle(),
                         dnnl::memory::data_type_size(source.data_type()), extents[0], extents[1],
                         spatial);
  return true;
}

// The primitive's result into the user's layout: kbench's transpose where it applies, else
// oneDNN's reorder.
void reorder_result(dnnl::stream& stream, dnnl::memory& from, dnnl::memory& to) {
  stream.wait();
  if (!transposed_to_plain(from, to)) dnnl::reorder(from, to).execute(stream, from, to);
}

bool run_primitive(ConvPath path, const ConvGeometry& g, ConvDescs d, const void* src,
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
    const dt dst_type = staged_dst_type(path, d.user_dst);
    const dnnl::memory::desc dst_any(d.user_dst.dims(), dst_type, tag::any);
    entry = find_or_make(
        ctx, primitive_key(path, g, src_dtype, weights_dtype, dst_type, true, layout, epilogue),
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
  F32Buffer src_widened(0), weights_widened(0);
  auto operand = [&](const dnnl::memory::desc& user, const void* data,
                     const dnnl::memory::desc& wanted, F32Buffer& scratch, F32Buffer& widened) {
    dnnl::memory::desc from = user;
    if (user.data_type() == dt::bf16 && wanted.data_type() == dt::f32 && dense(user)) {
      const std::size_t n = user.get_size() / sizeof(bf16_t);
      widened = F32Buffer(n);
      convert_in_chunks(n, [&](std::size_t start, std::size_t count) {
        convert_bf16_to_f32(static_cast<const bf16_t*>(data) + start, widened.data() + start,
                            count);
      });
      from = with_type(user, dt::f32);
      data = widened.data();
    }
    dnnl::memory user_memory = memory(from, data);
    if (from == wanted) return user_memory;
    scratch = scratch_for(wanted);
    dnnl::memory reordered = memory(wanted, scratch.data());
    dnnl::reorder(user_memory, reordered).execute(stream, user_memory, reordered);
    return reordered;
  };
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, operand(d.user_src, src, entry->src, src_scratch, src_widened)},
      {DNNL_ARG_WEIGHTS,
       operand(d.user_weights, weights, entry->weights, weights_scratch, weights_widened)},
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
  if (!direct && d.user_dst.data_type() == dt::bf16 && entry->dst.data_type() == dt::f32 &&
      dense(d.user_dst)) {
    // Into f32 in the user's layout (a reorder of layout only), then rounded to bf16 by kbench.
    const dnnl::memory::desc f32_user = with_type(d.user_dst, dt::f32);
    F32Buffer f32_scratch(0);
    dnnl::memory f32_memory = dst_memory;
    if (!(entry->dst == f32_user)) {
      f32_scratch = scratch_for(f32_user);
      f32_memory = memory(f32_user, f32_scratch.data());
      reorder_result(stream, dst_memory, f32_memory);
    }
    stream.wait();
    const auto* values = static_cast<const float*>(f32_memory.get_data_handle());
    convert_in_chunks(
        d.user_dst.get_size() / sizeof(bf16_t), [&](std::size_t start, std::size_t count) {
          convert_f32_to_bf16(values + start, static_cast<bf16_t*>(dst) + start, count);
        });
    return true;
  }
  if (!direct) {
    dnnl::memory user_dst = memory(d.user_dst, dst);
    reorder_result(stream, dst_memory, user_dst);
  }
  stream.wait();
  return true;
}

}  // namespace detail

ConvPath conv_default_path() {
  static const ConvPath path = detail::native_bf16() ? ConvPath::kOnednnBf16 : ConvPath::kOnednnF32;
  return path;
}

const char* conv_path_name(ConvPath path) {
  return path == ConvPath::kOnednnBf16 ? "onednn_bf16" : "onednn_f32";
}

using detail::channels_last_tag;
using detail::ConvDescs;
using detail::dnnl_type;
using detail::plain_tag;
using detail::weights_tag;
using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

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
  ConvDescs d;
  d.user_src = dnnl::memory::desc(src_dims, dnnl_type(src_dtype), plain_tag(rank));
  d.user_weights =
      dnnl::memory::desc(weights_dims, dnnl_type(weights_dtype), weights_tag(rank, g.transposed));
  d.user_dst = dnnl::memory::desc(
      dst_dims, dnnl_type(dst_dtype),
      dst_layout == ConvLayout::kPlain ? plain_tag(rank) : channels_last_tag(rank));
  d.bias = dnnl::memory::desc({g.out_channels}, dt::f32, tag::a);
  d.per_channel = dnnl::memory::desc(channel_dims, dt::f32, plain_tag(rank));

  if (g.transposed && method == TransposedMethod::kStridePhases) {
    return detail::run_stride_phases(path, g, d, src, weights, dst, dst_dtype, dst_layout,
                                     epilogue);
  }
  // oneDNN's deconvolution writes channels-last through a reference kernel (10 s where the
  // blocked layout takes 65 ms at 28k's cpu shape): never ask it for that layout directly.
  return detail::run_primitive(path, g, d, src, weights, dst,
                               dst_layout == ConvLayout::kChannelsLast && !g.transposed, epilogue);
}

void conv(const ConvGeometry& g, const void* src, kb_dtype src_dtype, const void* weights,
          kb_dtype weights_dtype, void* dst, kb_dtype dst_dtype, ConvLayout dst_layout,
          const ConvEpilogue& epilogue) {
  LibraryCall call;
  call.kind = LibraryCall::Kind::kConv;
  call.conv = {g, src_dtype, weights_dtype, dst_dtype, dst_layout, omp_get_max_threads()};
  const NotedLibraryCall noted(call);
  const ConvPath planned = planned_conv_path(call.conv);
  if (conv_on_path(planned, g, src, src_dtype, weights, weights_dtype, dst, dst_dtype, dst_layout,
                   epilogue))
    return;
  if (planned != ConvPath::kOnednnF32 &&
      conv_on_path(ConvPath::kOnednnF32, g, src, src_dtype, weights, weights_dtype, dst, dst_dtype,
                   dst_layout, epilogue))
    return;
  struct ReferenceKernelsAllowed {
    ReferenceKernelsAllowed() { detail::allow_reference_kernels = true; }
    ~ReferenceKernelsAllowed() { detail::allow_reference_kernels = false; }
  } last_resort;
  if (!conv_on_path(ConvPath::kOnednnF32, g, src, src_dtype, weights, weights_dtype, dst, dst_dtype,
                    dst_layout, epilogue))
    throw std::runtime_error("oneDNN has no convolution for this configuration");
}

}  // namespace kbench::ops
