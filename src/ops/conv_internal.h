// What the convolution's oneDNN calls (conv_onednn.cc) and its stride phases (conv_phases.cc)
// share: the user-side memory descriptors of one call, and one primitive call on them.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/conv.h"

namespace kbench::ops::detail {

// The call's operands as the caller holds them (plain or channels-last activations, PyTorch-layout
// weights), the conv bias and the per-channel operand of binary post-ops.
struct ConvDescs {
  dnnl::memory::desc user_src, user_weights, user_dst, bias, per_channel;
};

dnnl::memory::format_tag channels_last_tag(std::size_t rank);
// PyTorch weights: (O, I, k...) forward; (I, O, k...) transposed, oneDNN's (O, I, k...) permuted.
dnnl::memory::format_tag weights_tag(std::size_t rank, bool transposed);

// One primitive call: src and weights in their user descriptors, the result into `user_dst` (any
// strides: the plain or channels-last output, or one stride phase's interleaved view of it).
// Channels-last is a layout oneDNN's direct kernels write natively: with `try_direct` the
// primitive is asked for the user's own descriptor first. Otherwise it picks its layout and its
// result (bf16 for a bf16 user on a native-bf16 path, else f32) is reordered: by kbench's own
// transpose where that is channels-last to plain (ops/transpose.h), else by oneDNN. False
// where oneDNN cannot run it on this CPU.
bool run_primitive(ConvPath path, const ConvGeometry& g, ConvDescs d, const void* src,
                   const void* weights, void* dst, bool try_direct, const ConvEpilogue& epilogue);

// The transposed convolution as its stride phases (TransposedMethod::kStridePhases); false where
// the split does not apply to `g` or a phase cannot run.
bool run_stride_phases(ConvPath path, const ConvGeometry& g, const ConvDescs& base, const void* src,
                       const void* weights, void* dst, kb_dtype dst_dtype, ConvLayout layout,
                       const ConvEpilogue& epilogue);

}  // namespace kbench::ops::detail
