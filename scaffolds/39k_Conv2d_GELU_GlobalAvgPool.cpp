// 39k_Conv2d_GELU_GlobalAvgPool: a naive, correct starting point.
//
// KernelBench level 2 problem 67, a 3x3 VALID convolution with bias, GELU, then the mean over each
// output plane:
// y[n, co, i, j] = bias[co] + sum over ci, kh, kw of x[n, ci, i + kh, j + kw] *
//     weight[co, ci, kh, kw]  (stride 1, no padding);
// out[n, co] = mean over i, j of gelu(y[n, co, i, j]),
//     gelu(y) = 0.5 y (1 + tanh(sqrt(2/pi) (y + 0.044715 y^3))) (the tanh form);
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x       bf16  (N, Cin, H, W)
//          weight  bf16  (Cout, Cin, 3, 3)
//          bias    bf16  (Cout)            added to every output of its channel, before the GELU
// Output   out     bf16  (N, Cout)         one mean per output plane
// Params   none; read N, Cin, Cout, H, W from the tensors. The kernel 3 is a constant of the
//          program.
// Full size N=128, Cin=8, Cout=64, H=W=256: a short reduction (Cin*9 = 72 products per conv
// output) whose output is consumed at once by the pool, so it never needs to be stored.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

static const int64_t kKernel = 3;

// The tanh approximation of GELU (what jax.nn.gelu computes by default), not the erf form.
static float gelu_tanh(float z) {
  return 0.5f * z * (1.0f + tanhf(0.7978845608028654f * (z + 0.044715f * z * z * z)));
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& bias = inputs[2];
  kb_tensor& out = outputs[0];
  if (x.rank != 4 || weight.rank != 4 || bias.rank != 1 || weight.shape[1] != x.shape[1] ||
      weight.shape[2] != kKernel || weight.shape[3] != kKernel ||
      bias.shape[0] != weight.shape[0] || x.shape[2] < kKernel || x.shape[3] < kKernel) {
    return 1;
  }

  const int64_t batch = x.shape[0];
  const int64_t cin = x.shape[1];
  const int64_t h = x.shape[2];
  const int64_t w = x.shape[3];
  const int64_t cout = weight.shape[0];
  const int64_t oh_n = h - kKernel + 1;
  const int64_t ow_n = w - kKernel + 1;
  const int64_t plane = oh_n * ow_n;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One output plane at a time in f32, starting from the bias; for each weight tap the innermost
  // loop runs along an input row and an output row together. The plane is then pooled, its mean
  // summed in double since it has many values.
  std::vector<float> y(plane);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t co = 0; co < cout; ++co) {
      for (int64_t p = 0; p < plane; ++p) y[p] = kb_bf16_to_f32(bs[co]);
      for (int64_t ci = 0; ci < cin; ++ci) {
        const uint16_t* x_nc = xs + (n * cin + ci) * h * w;
        for (int64_t kh = 0; kh < kKernel; ++kh) {
          for (int64_t kw = 0; kw < kKernel; ++kw) {
            const float w_tap = kb_bf16_to_f32(ws[((co * cin + ci) * kKernel + kh) * kKernel + kw]);
            for (int64_t i = 0; i < oh_n; ++i) {
              const uint16_t* x_row = x_nc + (i + kh) * w + kw;
              for (int64_t j = 0; j < ow_n; ++j)
                y[i * ow_n + j] += w_tap * kb_bf16_to_f32(x_row[j]);
            }
          }
        }
      }
      double sum = 0;
      for (int64_t p = 0; p < plane; ++p) sum += gelu_tanh(y[p]);
      ys[n * cout + co] = kb_f32_to_bf16((float)(sum / (double)plane));
    }
  }
  return 0;
}
