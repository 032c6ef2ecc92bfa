// expect: compile_error
// Attack class: exhausting the machine's memory through the build. Each macro below expands to
// twice the one before, so the array's initialiser is 2^28 tokens, which the C++ front end holds
// all at once: unbounded, the compiler grew past 8.8 GiB resident and 14 GiB of address space in
// 85 s, enough to start the out-of-memory killer on a small machine, which may pick kbench or
// another evaluation. Each process of the build has 4 GiB of address space (RLIMIT_AS), so the
// compiler stops with "virtual memory exhausted" in a few seconds and the build fails.
#include <cmath>
#include <cstdint>

#include "kbench/kernel.h"

// clang-format off
#define KB_T0 0,
#define KB_T1 KB_T0 KB_T0
#define KB_T2 KB_T1 KB_T1
#define KB_T3 KB_T2 KB_T2
#define KB_T4 KB_T3 KB_T3
#define KB_T5 KB_T4 KB_T4
#define KB_T6 KB_T5 KB_T5
#define KB_T7 KB_T6 KB_T6
#define KB_T8 KB_T7 KB_T7
#define KB_T9 KB_T8 KB_T8
#define KB_T10 KB_T9 KB_T9
#define KB_T11 KB_T10 KB_T10
#define KB_T12 KB_T11 KB_T11
#define KB_T13 KB_T12 KB_T12
#define KB_T14 KB_T13 KB_T13
#define KB_T15 KB_T14 KB_T14
#define KB_T16 KB_T15 KB_T15
#define KB_T17 KB_T16 KB_T16
#define KB_T18 KB_T17 KB_T17
#define KB_T19 KB_T18 KB_T18
#define KB_T20 KB_T19 KB_T19
#define KB_T21 KB_T20 KB_T20
#define KB_T22 KB_T21 KB_T21
#define KB_T23 KB_T22 KB_T22
#define KB_T24 KB_T23 KB_T23
#define KB_T25 KB_T24 KB_T24
#define KB_T26 KB_T25 KB_T25
#define KB_T27 KB_T26 KB_T26
#define KB_T28 KB_T27 KB_T27
static const char ballast[] = {KB_T28 1};
// clang-format on

// Plain RMSNorm over the last axis: f32 math, normalized value rounded to bf16, times scale.
static void rmsnorm(const kb_config* cfg, const kb_tensor* inputs, kb_tensor* outputs) {
  const kb_tensor& x = inputs[0];
  const int64_t d = x.shape[x.rank - 1];
  if (d == 0) return;
  const int64_t rows = kb_numel(&x) / d;
  const auto* xs = static_cast<const uint16_t*>(x.data);
  const auto* scale = static_cast<const uint16_t*>(inputs[1].data);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  const float eps = static_cast<float>(kb_param_or(cfg, "epsilon", 1e-5));
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* row = xs + r * d;
    float sum_sq = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      const float v = kb_bf16_to_f32(row[j]);
      sum_sq += v * v;
    }
    const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
    for (int64_t j = 0; j < d; ++j) {
      const float normed = kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(row[j]) * inv_rms));
      out[r * d + j] = kb_f32_to_bf16(normed * kb_bf16_to_f32(scale[j]));
    }
  }
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || ballast[0] != 0) return 1;
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
