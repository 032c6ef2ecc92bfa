// 46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp: a naive, correct starting point.
//
// KernelBench level 2 problem 92, a 3x3 VALID convolution with bias, GroupNorm, tanh, hardswish, a
// residual add of the conv output, then logsumexp over the channels:
// y[n, c, i, j] = conv_bias[c] + sum over ci, kh, kw of x[n, ci, i + kh, j + kw] *
//     conv_weight[c, ci, kh, kw]  (stride 1, no padding);
// g = (y - mean_g) / sqrt(var_g + 1e-5) * gn_weight[c] + gn_bias[c], where each sample's Cout
//     channels form 16 groups of Cout/16 consecutive channels and mean_g, var_g are the mean and
//     biased variance of a group over its channels and all of Ho, Wo;
// t = tanh(g);  r = y + hardswish(t) = y + t * min(max(t + 3, 0), 6) / 6  (the residual is the
//     conv output y, not g);
// out[n, 0, i, j] = logsumexp over c of r[n, c, i, j] = m + log(sum_c exp(r - m)), m = max_c r;
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x            bf16  (N, Cin, H, W)
//          conv_weight  bf16  (Cout, Cin, 3, 3)
//          conv_bias    bf16  (Cout)            added to every output of its channel
//          gn_weight    bf16  (Cout)            the group norm's per-channel scale
//          gn_bias      bf16  (Cout)            the group norm's per-channel shift
// Output   out          bf16  (N, 1, H-2, W-2)  the channel axis reduced, kept with extent 1
// Params   none; read N, Cin, Cout, H, W from the tensors (Cout a multiple of 16). The kernel 3,
//          the 16 groups and eps 1e-5 are constants of the program.
// Full size N=128, Cin=8, Cout=64, H=W=128: a short conv reduction (Cin*9 = 72 products per
// output); the group statistics need a whole sample's conv output before its epilogue, which costs
// a tanh and an exp per value.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

static const int64_t kKernel = 3;
static const int64_t kGroups = 16;
// nn.GroupNorm's epsilon.
static const double kEps = 1e-5;

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 5 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& conv_weight = inputs[1];
  const kb_tensor& conv_bias = inputs[2];
  const kb_tensor& gn_weight = inputs[3];
  const kb_tensor& gn_bias = inputs[4];
  kb_tensor& out = outputs[0];
  if (x.rank != 4 || conv_weight.rank != 4 || conv_bias.rank != 1 || gn_weight.rank != 1 ||
      gn_bias.rank != 1 || conv_weight.shape[1] != x.shape[1] || conv_weight.shape[2] != kKernel ||
      conv_weight.shape[3] != kKernel || conv_bias.shape[0] != conv_weight.shape[0] ||
      gn_weight.shape[0] != conv_weight.shape[0] || gn_bias.shape[0] != conv_weight.shape[0] ||
      conv_weight.shape[0] % kGroups != 0 || x.shape[2] < kKernel || x.shape[3] < kKernel) {
    return 1;
  }

  const int64_t batch = x.shape[0];
  const int64_t cin = x.shape[1];
  const int64_t h = x.shape[2];
  const int64_t w = x.shape[3];
  const int64_t cout = conv_weight.shape[0];
  const int64_t group_channels = cout / kGroups;
  const int64_t oh_n = h - kKernel + 1;
  const int64_t ow_n = w - kKernel + 1;
  const int64_t plane = oh_n * ow_n;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(conv_weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(conv_bias.data);
  const uint16_t* gammas = static_cast<const uint16_t*>(gn_weight.data);
  const uint16_t* betas = static_cast<const uint16_t*>(gn_bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One sample at a time: the group statistics need its whole (Cout, Ho, Wo) conv output.
  std::vector<float> y(cout * plane);
  for (int64_t n = 0; n < batch; ++n) {
    // Each output plane in f32, starting from the bias; for each weight tap the innermost loop
    // runs along an input row and an output row together.
    for (int64_t co = 0; co < cout; ++co) {
      float* y_c = y.data() + co * plane;
      for (int64_t p = 0; p < plane; ++p) y_c[p] = kb_bf16_to_f32(bs[co]);
      for (int64_t ci = 0; ci < cin; ++ci) {
        const uint16_t* x_nc = xs + (n * cin + ci) * h * w;
        for (int64_t kh = 0; kh < kKernel; ++kh) {
          for (int64_t kw = 0; kw < kKernel; ++kw) {
            const float w_tap = kb_bf16_to_f32(ws[((co * cin + ci) * kKernel + kh) * kKernel + kw]);
            for (int64_t i = 0; i < oh_n; ++i) {
              const uint16_t* x_row = x_nc + (i + kh) * w + kw;
              for (int64_t j = 0; j < ow_n; ++j)
                y_c[i * ow_n + j] += w_tap * kb_bf16_to_f32(x_row[j]);
            }
          }
        }
      }
    }

    // Group by group (its channels are consecutive, so its values are one contiguous range): the
    // statistics in double, since a group has many values, in two passes (mean, then the biased
    // variance around it); then each value replaced by the residual r = y + hardswish(tanh(g)).
    for (int64_t g = 0; g < kGroups; ++g) {
      float* v = y.data() + g * group_channels * plane;
      const int64_t size = group_channels * plane;
      double mean = 0;
      for (int64_t i = 0; i < size; ++i) mean += v[i];
      mean /= (double)size;
      double var = 0;
      for (int64_t i = 0; i < size; ++i) var += (v[i] - mean) * (v[i] - mean);
      var /= (double)size;
      const float inv_sd = (float)(1.0 / sqrt(var + kEps));
      for (int64_t i = 0; i < size; ++i) {
        const int64_t c = g * group_channels + i / plane;
        const float normed =
            (float)(v[i] - mean) * inv_sd * kb_bf16_to_f32(gammas[c]) + kb_bf16_to_f32(betas[c]);
        const float t = tanhf(normed);
        const float relu6 = fminf(fmaxf(t + 3.0f, 0.0f), 6.0f);
        v[i] += t * relu6 / 6.0f;
      }
    }

    // logsumexp over the channels at each pixel; subtracting the maximum keeps exp from
    // overflowing, and it cancels in the result.
    for (int64_t p = 0; p < plane; ++p) {
      float m = y[p];
      for (int64_t c = 1; c < cout; ++c) m = fmaxf(m, y[c * plane + p]);
      float sum = 0.0f;
      for (int64_t c = 0; c < cout; ++c) sum += expf(y[c * plane + p] - m);
      ys[n * plane + p] = kb_f32_to_bf16(m + logf(sum));
    }
  }
  return 0;
}
