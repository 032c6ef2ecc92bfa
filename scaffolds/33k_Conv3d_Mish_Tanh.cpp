// 33k_Conv3d_Mish_Tanh: a naive, correct starting point.
//
// KernelBench level 2 problem 47, a 3x3x3 VALID 3-D convolution with its bias, a mish, then a
// tanh:
// y[n, co, od, oh, ow] = bias[co] + sum over ci, kd, kh, kw of
//                        weight[co, ci, kd, kh, kw] * x[n, ci, od + kd, oh + kh, ow + kw]
// (PyTorch's conv3d: a cross-correlation, no kernel flip; stride 1, no padding);
// out = tanh(mish(y)), mish(y) = y * tanh(softplus(y)), softplus(y) = log(1 + exp(y));
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x       bf16  (N, Cin, D, H, W)        NCDHW, N = batch_size
//          weight  bf16  (Cout, Cin, KD, KH, KW)  OIDHW, KD = KH = KW = 3
//          bias    bf16  (Cout)
// Output   out     bf16  (N, Cout, D - KD + 1, H - KH + 1, W - KW + 1)
// Params   none; read every extent from the tensors.
// Full size N=16, Cin=32, Cout=64, D=32, H=W=64: compute-bound, 2*N*Cout*Do*Ho*Wo*Cin*27 flops;
// fuse the activations into the conv's output tiles.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& bias = inputs[2];
  kb_tensor& out = outputs[0];
  if (x.rank != 5 || weight.rank != 5 || bias.rank != 1 || out.rank != 5 ||
      weight.shape[1] != x.shape[1] || bias.shape[0] != weight.shape[0]) {
    return 1;
  }

  const int64_t batch = x.shape[0], cin = x.shape[1];
  const int64_t d = x.shape[2], h = x.shape[3], w = x.shape[4];
  const int64_t cout = weight.shape[0];
  const int64_t kd = weight.shape[2], kh = weight.shape[3], kw = weight.shape[4];
  const int64_t dout = d - kd + 1, ho = h - kh + 1, wo = w - kw + 1;
  if (dout < 1 || ho < 1 || wo < 1 || out.shape[0] != batch || out.shape[1] != cout ||
      out.shape[2] != dout || out.shape[3] != ho || out.shape[4] != wo) {
    return 1;
  }
  const int64_t volume = dout * ho * wo;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One output volume (sample n, channel co) at a time in f32, starting from the bias. Each kernel
  // tap adds one weight times a shifted window of an input volume, so the innermost loop reads an
  // input row contiguously.
  std::vector<float> acc(volume);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t co = 0; co < cout; ++co) {
      const float b = kb_bf16_to_f32(bs[co]);
      for (int64_t i = 0; i < volume; ++i) acc[i] = b;
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
                  float* y_row = acc.data() + (od * ho + oh) * wo;
                  for (int64_t ow = 0; ow < wo; ++ow)
                    y_row[ow] += w_tap * kb_bf16_to_f32(x_row[ow]);
                }
              }
            }
          }
        }
      }
      // log1pf(expf(y)) is +inf once expf overflows (y > ~88), where tanh(inf) = 1 still gives
      // mish(y) = y, so large inputs need no special case.
      uint16_t* y_vol = ys + (n * cout + co) * volume;
      for (int64_t i = 0; i < volume; ++i) {
        const float v = acc[i];
        y_vol[i] = kb_f32_to_bf16(tanhf(v * tanhf(log1pf(expf(v)))));
      }
    }
  }
  return 0;
}
