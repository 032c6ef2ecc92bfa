// expect: correct on 12p_RMSNorm
// A 12p_RMSNorm candidate written with Highway, the way a kernel author would use it: proves that
// a candidate including <hwy/highway.h> compiles under kbench's fixed candidate command on this CPU
// (Highway 1.0.3 refuses to under -march=native on Sapphire Rapids without -DHWY_WANT_AVX3_DL) and
// runs correctly through the real worker. scripts/check-march.sh also compiles it for other CPUs.
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>

#include "kbench/kernel.h"

namespace hn = hwy::HWY_NAMESPACE;

namespace {

using D = hn::ScalableTag<float>;

// Widens Lanes(D) bf16 values (the upper halves of binary32) to f32.
hn::Vec<D> load_bf16(const uint16_t* p) {
  const D d;
  const hn::Rebind<uint16_t, D> d16;
  const hn::RebindToUnsigned<D> d32;
  return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(d32, hn::LoadU(d16, p))));
}

float sum_of_squares(const uint16_t* row, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto acc = hn::Zero(d);
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    const auto v = load_bf16(row + j);
    acc = hn::MulAdd(v, v, acc);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, acc));
  for (; j < n; ++j) sum += kb_bf16_to_f32(row[j]) * kb_bf16_to_f32(row[j]);
  return sum;
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const int64_t d = x.shape[x.rank - 1];
  if (d == 0) return 0;
  const int64_t rows = kb_numel(&x) / d;
  const auto* xs = static_cast<const uint16_t*>(x.data);
  const auto* scale = static_cast<const uint16_t*>(inputs[1].data);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  const float eps = static_cast<float>(kb_param_or(cfg, "epsilon", 1e-5));
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* row = xs + r * d;
    const float inv_rms = 1.0f / std::sqrt(sum_of_squares(row, d) / static_cast<float>(d) + eps);
    for (int64_t j = 0; j < d; ++j) {
      const float normed = kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(row[j]) * inv_rms));
      out[r * d + j] = kb_f32_to_bf16(normed * kb_bf16_to_f32(scale[j]));
    }
  }
  return 0;
}
