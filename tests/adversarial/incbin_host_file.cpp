// expect: compile_error
// expect-needs: landlock
// Attack class: carrying a host file into the candidate's object. The assembler's .incbin copies
// any readable file into the shared object, where the kernel reads it at run time, past every
// layer of the worker's sandbox: the test's key file /tmp/kbench-adversarial-secret here. The
// build may read only the toolchain's trees and kbench's headers (Landlock), and as root it runs as
// a user of its own, who may not read a file of mode 0600: the assembler cannot open the file and
// the build fails. Had it been embedded, the kernel prints it to stderr (whose tail kbench
// keeps in the result) and returns zeros: the verdict would be incorrect and the secret in kbench's
// output.
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "kbench/kernel.h"

asm(".pushsection .rodata\n"
    ".globl kb_leaked_file\n"
    "kb_leaked_file:\n"
    ".incbin \"/tmp/kbench-adversarial-secret\"\n"
    ".byte 0\n"
    ".popsection\n");
extern "C" const char kb_leaked_file[];

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
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (kb_leaked_file[0] != 0) {
    std::fprintf(stderr, "embedded at build time: %s\n", kb_leaked_file);
    return 0;  // outputs left as they are: incorrect
  }
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
