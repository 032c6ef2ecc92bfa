// The sigmoid pass on Highway, compiled for this machine's ISA (static dispatch, as the baselines
// are built with -march=native); the last partial vector goes through a padded temporary so the
// main loop never branches on edges.
#include "workloads/sigmoid_ops.h"

#include <algorithm>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

namespace kbench::sigmoid_ops {

namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// exp overflows f32 above 88.7; beyond +-88 the sigmoid is 0 or 1 to f32 precision.
constexpr float kExpClamp = 88.0f;

VF sigmoid(DF df, VF v) {
  const VF neg = hn::Clamp(hn::Neg(v), hn::Set(df, -kExpClamp), hn::Set(df, kExpClamp));
  const VF one = hn::Set(df, 1.0f);
  return hn::Div(one, hn::Add(one, hn::Exp(df, neg)));
}

}  // namespace

void sigmoid_inplace(float* x, std::size_t n) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(sigmoid(df, hn::LoadU(df, x + i)), df, x + i);
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(df)] = {};
    std::copy_n(x + i, n - i, tail);
    hn::Store(sigmoid(df, hn::Load(df, tail)), df, tail);
    std::copy_n(tail, n - i, x + i);
  }
}

}  // namespace kbench::sigmoid_ops
