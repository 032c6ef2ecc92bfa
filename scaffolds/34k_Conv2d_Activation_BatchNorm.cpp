// 34k_Conv2d_Activation_BatchNorm: a naive, correct starting point.
//
// KernelBench level 2 problem 52, a 3x3 VALID convolution with bias, mish, then a training-mode
// BatchNorm2d (the batch's own statistics):
// y[n, co, i, j] = conv_bias[co] + sum over ci, kh, kw of x[n, ci, i + kh, j + kw] *
//     conv_weight[co, ci, kh, kw]  (stride 1, no padding);
// a = mish(y) = y * tanh(softplus(y)), softplus(y) = log(1 + exp(y));
// out = (a - mean_c) / sqrt(var_c + 1e-5) * bn_weight[c] + bn_bias[c], mean_c and var_c the mean
//     and biased variance of channel c over all of N, Ho, Wo;
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x            bf16  (N, Cin, H, W)
//          conv_weight  bf16  (Cout, Cin, 3, 3)
//          conv_bias    bf16  (Cout)            added to every output of its channel
//          bn_weight    bf16  (Cout)            the batch norm's per-channel scale
//          bn_bias      bf16  (Cout)            the batch norm's per-channel shift
// Output   out          bf16  (N, Cout, H-2, W-2)
// Params   none; read N, Cin, Cout, H, W from the tensors. The kernel 3 and eps 1e-5 are constants
//          of the program.
// Full size N=64, Cin=64, Cout=128, H=W=128: compute-bound, 2*N*Cout*Ho*Wo*Cin*9 flops; every
// output depends on its whole channel across the batch, so the statistics need the complete conv
// output before any output is written.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

static const int64_t kKernel = 3;
// nn.BatchNorm2d's epsilon.
static const double kEps = 1e-5;

// log(1 + exp(y)) without overflow for large y.
static float softplus(float y) {
  return y > 0.0f ? y + log1pf(expf(-y)) : log1pf(expf(y));
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 5 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& conv_weight = inputs[1];
  const kb_tensor& conv_bias = inputs[2];
  const kb_tensor& bn_weight = inputs[3];
  const kb_tensor& bn_bias = inputs[4];
  kb_tensor& out = outputs[0];
  if (x.rank != 4 || conv_weight.rank != 4 || conv_bias.rank != 1 || bn_weight.rank != 1 ||
      bn_bias.rank != 1 || conv_weight.shape[1] != x.shape[1] || conv_weight.shape[2] != kKernel ||
      conv_weight.shape[3] != kKernel || conv_bias.shape[0] != conv_weight.shape[0] ||
      bn_weight.shape[0] != conv_weight.shape[0] || bn_bias.shape[0] != conv_weight.shape[0] ||
      x.shape[2] < kKernel || x.shape[3] < kKernel) {
    return 1;
  }

  const int64_t batch = x.shape[0];
  const int64_t cin = x.shape[1];
  const int64_t h = x.shape[2];
  const int64_t w = x.shape[3];
  const int64_t cout = conv_weight.shape[0];
  const int64_t oh_n = h - kKernel + 1;
  const int64_t ow_n = w - kKernel + 1;
  const int64_t plane = oh_n * ow_n;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(conv_weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(conv_bias.data);
  const uint16_t* gammas = static_cast<const uint16_t*>(bn_weight.data);
  const uint16_t* betas = static_cast<const uint16_t*>(bn_bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // The whole (N, Cout, Ho, Wo) activation in f32: the batch statistics need all of it. One output
  // plane at a time, starting from the bias; for each weight tap the innermost loop runs along an
  // input row and an output row together.
  std::vector<float> a(batch * cout * plane);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t co = 0; co < cout; ++co) {
      float* y = a.data() + (n * cout + co) * plane;
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
      for (int64_t p = 0; p < plane; ++p) y[p] = y[p] * tanhf(softplus(y[p]));
    }
  }

  // Channel by channel: the statistics over N * Ho * Wo values, accumulated in double since that
  // count is large, in two passes (mean, then the biased variance around it); then each element
  // normalized, scaled and shifted.
  const double count = (double)(batch * plane);
  for (int64_t co = 0; co < cout; ++co) {
    double mean = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const float* v = a.data() + (n * cout + co) * plane;
      for (int64_t p = 0; p < plane; ++p) mean += v[p];
    }
    mean /= count;
    double var = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const float* v = a.data() + (n * cout + co) * plane;
      for (int64_t p = 0; p < plane; ++p) var += (v[p] - mean) * (v[p] - mean);
    }
    var /= count;
    const float scale = (float)(kb_bf16_to_f32(gammas[co]) / sqrt(var + kEps));
    const float shift = kb_bf16_to_f32(betas[co]);
    for (int64_t n = 0; n < batch; ++n) {
      const float* v = a.data() + (n * cout + co) * plane;
      uint16_t* o = ys + (n * cout + co) * plane;
      for (int64_t p = 0; p < plane; ++p)
        o[p] = kb_f32_to_bf16((float)(v[p] - mean) * scale + shift);
    }
  }
  return 0;
}
