// Which oneDNN kernels kbench's primitives run on. oneDNN's reference implementations ("ref:any")
// are its correctness fallbacks, loops without blocking or vectors, and it picks one silently
// whenever no optimized kernel takes a configuration: on an AVX2 core (oneDNN 2.6) an f32 matmul
// with a bf16 binary post-op took 18 s where the same GEMM without it took 15 ms, and a
// channels-last f32 convolution 400 ms where the blocked layout took a few. A baseline never
// stands on one while another path exists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kbench::ops {

// The implementation names ("gemm:jit", "jit:avx2", "brg:avx512_core_amx_bf16") of every oneDNN
// primitive this process created, each once, in creation order.
std::vector<std::string> onednn_implementations_created();

namespace detail {

inline bool is_reference_implementation(std::string_view impl_info) {
  return impl_info.starts_with("ref");
}

// The GEMM and convolution paths report each primitive they create.
void note_onednn_implementation(std::string_view impl_info);

}  // namespace detail
}  // namespace kbench::ops
