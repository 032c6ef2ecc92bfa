// expect: rejected
// Attack class: reaching the network. On its first call the kernel opens a TCP connection to
// 127.0.0.1:47391, where the test listens (and checks after the evaluation that nothing connected),
// sends a line, and then computes honestly. The seccomp filter kills the worker at socket(), so the
// verdict is rejected; the network namespace (a loopback that is down) and landlock's TCP rules
// would stop the connect as well. On a runner without them the connection arrives and the verdict
// is correct, which the test's listener turns into a failure.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>

#include "kbench/kernel.h"

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

namespace {

// The port tests/adversarial_test.cc listens on.
constexpr uint16_t kListenerPort = 47391;

bool g_tried = false;

void phone_home() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(kListenerPort);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    static const char kLine[] = "connects_localhost.cpp was here\n";
    const ssize_t sent = send(fd, kLine, sizeof kLine - 1, MSG_NOSIGNAL);
    (void)sent;  // the connection is the evidence
  }
  close(fd);
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (!g_tried) {
    g_tried = true;
    phone_home();
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
