// 25k_Conv3d_GroupNorm_Mean: a naive, correct starting point.
//
// KernelBench level 2 problem 23, a 3x3x3 VALID 3-D convolution with its bias, a group norm, then
// the mean of each sample's normalized output:
// y[n, co, od, oh, ow] = conv_bias[co] + sum over ci, kd, kh, kw of
//                        weight[co, ci, kd, kh, kw] * x[n, ci, od + kd, oh + kh, ow + kw]
// (PyTorch's conv3d: a cross-correlation, no kernel flip; stride 1, no padding);
// g = (y - mean_g) / sqrt(var_g + 1e-5) * gamma[co] + beta[co], where the Cout channels form 8
// groups of Cout/8 consecutive channels and mean_g, var_g are the mean and biased variance of y
// over a group's channels and all of Do, Ho, Wo (per sample);
// out[n] = mean of g[n] over (Cout, Do, Ho, Wo); accumulated in f32 (or wider), rounded to bf16
// once at the end.
//
// Inputs   x          bf16  (N, Cin, D, H, W)        NCDHW, N = batch_size
//          weight     bf16  (Cout, Cin, KD, KH, KW)  OIDHW, KD = KH = KW = 3
//          conv_bias  bf16  (Cout)
//          gamma      bf16  (Cout)                   the group norm's per-channel scale
//          beta       bf16  (Cout)                   the group norm's per-channel shift
// Output   out        bf16  (N)                      one mean per sample
// Params   none (8 groups and epsilon 1e-5 are constants); read every extent from the tensors.
// Full size N=128, Cin=3, Cout=24, D=24, H=W=32: 2*N*Cout*Do*Ho*Wo*Cin*27 flops with a short
// reduction (Cin*27 = 81); each output value is needed only through per-channel sums.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

// The original's num_groups and nn.GroupNorm's epsilon.
static const int64_t kGroups = 8;
static const double kEps = 1e-5;

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 5 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& conv_bias = inputs[2];
  const kb_tensor& gamma = inputs[3];
  const kb_tensor& beta = inputs[4];
  kb_tensor& out = outputs[0];
  if (x.rank != 5 || weight.rank != 5 || conv_bias.rank != 1 || gamma.rank != 1 || beta.rank != 1 ||
      out.rank != 1 || weight.shape[1] != x.shape[1] || conv_bias.shape[0] != weight.shape[0] ||
      gamma.shape[0] != weight.shape[0] || beta.shape[0] != weight.shape[0] ||
      weight.shape[0] % kGroups != 0 || out.shape[0] != x.shape[0]) {
    return 1;
  }

  const int64_t batch = x.shape[0], cin = x.shape[1];
  const int64_t d = x.shape[2], h = x.shape[3], w = x.shape[4];
  const int64_t cout = weight.shape[0];
  const int64_t kd = weight.shape[2], kh = weight.shape[3], kw = weight.shape[4];
  const int64_t dout = d - kd + 1, ho = h - kh + 1, wo = w - kw + 1;
  if (dout < 1 || ho < 1 || wo < 1) return 1;
  const int64_t volume = dout * ho * wo;
  const int64_t per_group = cout / kGroups;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* cbs = static_cast<const uint16_t*>(conv_bias.data);
  const uint16_t* gammas = static_cast<const uint16_t*>(gamma.data);
  const uint16_t* betas = static_cast<const uint16_t*>(beta.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One sample's whole conv output at a time in f32 (a group spans several channels), each
  // channel's volume starting from the conv bias. Each kernel tap adds one weight times a shifted
  // window of an input volume, so the innermost loop reads an input row contiguously.
  std::vector<float> y(cout * volume);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t co = 0; co < cout; ++co) {
      float* y_vol = y.data() + co * volume;
      const float cb = kb_bf16_to_f32(cbs[co]);
      for (int64_t i = 0; i < volume; ++i) y_vol[i] = cb;
      for (int64_t ci = 0; ci < cin; ++ci) {
        const uint16_t* x_vol = xs + (n * cin + ci) * d * h * w;
        for (int64_t p = 0; p < kd; ++p) {
          for (int64_t r = 0; r < kh; ++r) {
            for (int64_t s = 0; s < kw; ++s) {
              const float w_tap =
                  kb_bf16_to_f32(ws[(((co * cin + ci) * kd + p) * kh + r) * kw + s]);
              for (int64_t od = 0; od < dout; ++od) {
                for (int64_t oh = 0; oh < ho; ++oh) {
                  const uint16_t* x_row = x_vol + ((od + p) * h + oh + r) * w + s;
                  float* y_row = y_vol + (od * ho + oh) * wo;
                  for (int64_t ow = 0; ow < wo; ++ow)
                    y_row[ow] += w_tap * kb_bf16_to_f32(x_row[ow]);
                }
              }
            }
          }
        }
      }
    }

    // Each group's statistics in two passes (mean, then the biased variance around it), and the
    // sum of the normalized values, all in double: (y - mean_g) sums to zero over each group, so
    // the output is the small remainder that gamma's variation across channels leaves.
    double total = 0.0;
    for (int64_t grp = 0; grp < kGroups; ++grp) {
      const float* v = y.data() + grp * per_group * volume;
      const int64_t group_size = per_group * volume;
      double mean = 0.0;
      for (int64_t i = 0; i < group_size; ++i) mean += v[i];
      mean /= (double)group_size;
      double var = 0.0;
      for (int64_t i = 0; i < group_size; ++i) var += (v[i] - mean) * (v[i] - mean);
      var /= (double)group_size;
      const double inv_sd = 1.0 / sqrt(var + kEps);
      for (int64_t i = 0; i < group_size; ++i) {
        const int64_t c = grp * per_group + i / volume;
        total += (v[i] - mean) * inv_sd * kb_bf16_to_f32(gammas[c]) + kb_bf16_to_f32(betas[c]);
      }
    }
    ys[n] = kb_f32_to_bf16((float)(total / (double)(cout * volume)));
  }
  return 0;
}
