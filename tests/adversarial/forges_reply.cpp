// expect: rejected
// Attack class: forging a reply on kbench's channel. The worker answers each request on its control
// socket (descriptor 5) with {kReplyMagic ^ sequence, kb_run's return}
// (src/harness/worker_protocol.h; sequences count calls from 1). This kernel counts its calls and
// writes the reply kbench expects for the current one before it starts computing, so a timer that
// stops at the reply sees almost nothing, and the real reply follows later. kbench must not take a
// reply from the candidate's code: a second reply, a reply before the worker's own, or any write on
// the channel by the candidate is rejected. (The protocol below is copied, not included: a
// candidate is one file.)
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>

#include "kbench/kernel.h"

// RMSNorm over the last axis, honest and deliberately slow: the mean of squares is recomputed for
// every element (D^2 work per row), which puts its time at smoke size several times above the
// baseline's, call overhead included. A speedup of 1.0 or more can then only come from the attack.
static void rmsnorm_slow(const kb_config* cfg, const kb_tensor* inputs, kb_tensor* outputs) {
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
    for (int64_t j = 0; j < d; ++j) {
      // out may alias x as far as the compiler knows, so this sum is not hoisted out of the loop.
      float sum_sq = 0.0f;
      for (int64_t k = 0; k < d; ++k) {
        const float v = kb_bf16_to_f32(row[k]);
        sum_sq += v * v;
      }
      const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
      const float normed = kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(row[j]) * inv_rms));
      out[r * d + j] = kb_f32_to_bf16(normed * kb_bf16_to_f32(scale[j]));
    }
  }
}

namespace {

constexpr int kControlFd = 5;
constexpr uint32_t kReplyMagic = 0x4b425250;  // "KBRP"

struct Reply {
  uint32_t magic_xor_sequence;
  int32_t kernel_return;
};

uint32_t g_calls = 0;

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const Reply forged{kReplyMagic ^ ++g_calls, 0};
  const ssize_t sent = send(kControlFd, &forged, sizeof forged, MSG_NOSIGNAL);
  (void)sent;                          // nothing to do if kbench's channel is out of reach
  rmsnorm_slow(cfg, inputs, outputs);  // slow, so the forged reply is well ahead of the real one
  return 0;
}
