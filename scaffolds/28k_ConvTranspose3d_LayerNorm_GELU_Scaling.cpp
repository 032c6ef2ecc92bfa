// 28k_ConvTranspose3d_LayerNorm_GELU_Scaling: a naive, correct starting point.
//
// KernelBench level 2 problem 34, a 3-D transposed convolution (kernel 4, stride 2, padding 1)
// with bias, LayerNorm over the last axis, GELU and a scaling by 1.0:
// y[n, co, od, oh, ow] = conv_bias[co] + sum over ci, kd, kh, kw of
//     x[n, ci, id, ih, iw] * conv_weight[ci, co, kd, kh, kw],
//     where per axis o = 2 i - 1 + k, i.e. i = (o + 1 - k) / 2 when that is a whole number inside
//     the input (PyTorch's ConvTranspose3d; output extents 2 D, 2 H, 2 W);
// l = (y - mean_w) / sqrt(var_w + 1e-5) * ln_weight[ow] + ln_bias[ow], mean_w and var_w the mean
//     and biased variance of each row along the LAST axis (W_out), not over the channels;
// out = gelu(l) * 1.0, gelu(l) = 0.5 l (1 + tanh(sqrt(2/pi) (l + 0.044715 l^3))) (the tanh form);
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x            bf16  (N, Cin, D, H, W)
//          conv_weight  bf16  (Cin, Cout, 4, 4, 4)   note: (in, out, ...), ConvTranspose's layout
//          conv_bias    bf16  (Cout)                 added to every output of its channel
//          ln_weight    bf16  (2W)                   the LayerNorm's per-position scale along W_out
//          ln_bias      bf16  (2W)                   the LayerNorm's per-position shift along W_out
// Output   out          bf16  (N, Cout, 2D, 2H, 2W)
// Params   none; read N, Cin, Cout, D, H, W from the tensors. The kernel 4, stride 2, padding 1,
//          eps 1e-5 and scaling 1.0 are constants of the program.
// Full size N=32, Cin=32, Cout=64, D=16, H=W=32 (W_out = 64): each output meets only 2 of the 4
// taps per axis (Cin*8 live products), and the LayerNorm is a pass over each finished W_out row.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

static const int64_t kKernel = 4;
static const int64_t kStride = 2;
static const int64_t kPadding = 1;
// nn.LayerNorm's epsilon.
static const float kEps = 1e-5f;
static const float kScaling = 1.0f;

// The tanh approximation of GELU (what jax.nn.gelu computes by default), not the erf form.
static float gelu_tanh(float z) {
  return 0.5f * z * (1.0f + tanhf(0.7978845608028654f * (z + 0.044715f * z * z * z)));
}

// The input index that output index o reads through kernel tap k, or -1 where the tap falls
// between input elements (the zeros of the stride) or outside the input.
static int64_t input_index(int64_t o, int64_t k, int64_t in_extent) {
  const int64_t num = o + kPadding - k;
  if (num < 0 || num % kStride != 0 || num / kStride >= in_extent) return -1;
  return num / kStride;
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 5 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& conv_weight = inputs[1];
  const kb_tensor& conv_bias = inputs[2];
  const kb_tensor& ln_weight = inputs[3];
  const kb_tensor& ln_bias = inputs[4];
  kb_tensor& out = outputs[0];
  if (x.rank != 5 || conv_weight.rank != 5 || conv_bias.rank != 1 || ln_weight.rank != 1 ||
      ln_bias.rank != 1 || conv_weight.shape[0] != x.shape[1] || conv_weight.shape[2] != kKernel ||
      conv_weight.shape[3] != kKernel || conv_weight.shape[4] != kKernel ||
      conv_bias.shape[0] != conv_weight.shape[1]) {
    return 1;
  }

  const int64_t batch = x.shape[0];
  const int64_t cin = x.shape[1];
  const int64_t d = x.shape[2];
  const int64_t h = x.shape[3];
  const int64_t w = x.shape[4];
  const int64_t cout = conv_weight.shape[1];
  // (in - 1) * stride - 2 * padding + kernel = 2 in.
  const int64_t od_n = (d - 1) * kStride - 2 * kPadding + kKernel;
  const int64_t oh_n = (h - 1) * kStride - 2 * kPadding + kKernel;
  const int64_t ow_n = (w - 1) * kStride - 2 * kPadding + kKernel;
  if (ln_weight.shape[0] != ow_n || ln_bias.shape[0] != ow_n) return 1;
  const int64_t taps = kKernel * kKernel * kKernel;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(conv_weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(conv_bias.data);
  const uint16_t* gammas = static_cast<const uint16_t*>(ln_weight.data);
  const uint16_t* betas = static_cast<const uint16_t*>(ln_bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One output row along W_out at a time in f32, starting from the bias: the LayerNorm needs
  // exactly that row. Taps that land between input elements or outside the input are skipped as
  // early as their axis allows.
  std::vector<float> row(ow_n);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t co = 0; co < cout; ++co) {
      for (int64_t od = 0; od < od_n; ++od) {
        for (int64_t oh = 0; oh < oh_n; ++oh) {
          for (int64_t ow = 0; ow < ow_n; ++ow) row[ow] = kb_bf16_to_f32(bs[co]);
          for (int64_t ci = 0; ci < cin; ++ci) {
            const uint16_t* x_nc = xs + (n * cin + ci) * d * h * w;
            const uint16_t* w_cc = ws + (ci * cout + co) * taps;
            for (int64_t kd = 0; kd < kKernel; ++kd) {
              const int64_t id = input_index(od, kd, d);
              if (id < 0) continue;
              for (int64_t kh = 0; kh < kKernel; ++kh) {
                const int64_t ih = input_index(oh, kh, h);
                if (ih < 0) continue;
                const uint16_t* x_row = x_nc + (id * h + ih) * w;
                // Along W the loop runs over the input row instead: element iw meets tap kw at
                // ow = 2 iw - 1 + kw, the same products input_index pairs up, without visiting the
                // (ow, kw) pairs that fall between input elements.
                for (int64_t kw = 0; kw < kKernel; ++kw) {
                  const float w_tap = kb_bf16_to_f32(w_cc[(kd * kKernel + kh) * kKernel + kw]);
                  for (int64_t iw = 0; iw < w; ++iw) {
                    const int64_t ow = iw * kStride - kPadding + kw;
                    if (ow >= 0 && ow < ow_n) row[ow] += w_tap * kb_bf16_to_f32(x_row[iw]);
                  }
                }
              }
            }
          }

          // The row's statistics in two passes (mean, then the biased variance around it), which
          // stays accurate when the mean is large next to the spread.
          float mean = 0.0f;
          for (int64_t ow = 0; ow < ow_n; ++ow) mean += row[ow];
          mean /= (float)ow_n;
          float var = 0.0f;
          for (int64_t ow = 0; ow < ow_n; ++ow) var += (row[ow] - mean) * (row[ow] - mean);
          var /= (float)ow_n;
          const float inv_sd = 1.0f / sqrtf(var + kEps);
          uint16_t* y_row = ys + (((n * cout + co) * od_n + od) * oh_n + oh) * ow_n;
          for (int64_t ow = 0; ow < ow_n; ++ow) {
            const float l =
                (row[ow] - mean) * inv_sd * kb_bf16_to_f32(gammas[ow]) + kb_bf16_to_f32(betas[ow]);
            y_row[ow] = kb_f32_to_bf16(gelu_tanh(l) * kScaling);
          }
        }
      }
    }
  }
  return 0;
}
