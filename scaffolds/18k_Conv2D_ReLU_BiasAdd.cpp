// 18k_Conv2D_ReLU_BiasAdd: a naive, correct starting point.
//
// KernelBench level 2 problem 1, a 3x3 VALID convolution with its bias, a ReLU, then a second
// per-channel bias:
// y[n, co, oh, ow] = conv_bias[co] + sum over ci, kh, kw of
//                    weight[co, ci, kh, kw] * x[n, ci, oh + kh, ow + kw]
// (PyTorch's conv2d: a cross-correlation, no kernel flip; stride 1, no padding);
// out = relu(y) + bias[co], accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x          bf16  (N, Cin, H, W)       NCHW, N = batch_size
//          weight     bf16  (Cout, Cin, KH, KW)  OIHW, KH = KW = 3
//          conv_bias  bf16  (Cout)               added before the ReLU
//          bias       bf16  (Cout, 1, 1)         added after the ReLU
// Output   out        bf16  (N, Cout, H - KH + 1, W - KW + 1)
// Params   none; read every extent from the tensors.
// Full size N=128, Cin=64, Cout=128, H=W=128: compute-bound, 2*N*Cout*Ho*Wo*Cin*9 flops; fuse
// the epilogue into the conv's output tiles.
#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 4 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& conv_bias = inputs[2];
  const kb_tensor& bias = inputs[3];
  kb_tensor& out = outputs[0];
  if (x.rank != 4 || weight.rank != 4 || conv_bias.rank != 1 || bias.rank != 3 || out.rank != 4 ||
      weight.shape[1] != x.shape[1] || conv_bias.shape[0] != weight.shape[0] ||
      bias.shape[0] != weight.shape[0] || bias.shape[1] != 1 || bias.shape[2] != 1) {
    return 1;
  }

  const int64_t batch = x.shape[0], cin = x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t cout = weight.shape[0], kh = weight.shape[2], kw = weight.shape[3];
  const int64_t ho = h - kh + 1, wo = w - kw + 1;
  if (ho < 1 || wo < 1 || out.shape[0] != batch || out.shape[1] != cout || out.shape[2] != ho ||
      out.shape[3] != wo) {
    return 1;
  }
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* cbs = static_cast<const uint16_t*>(conv_bias.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One output plane (sample n, channel co) at a time in f32, starting from the conv bias. Each
  // kernel tap adds one weight times a shifted window of an input plane, so the innermost loop
  // reads an input row contiguously.
  std::vector<float> plane(ho * wo);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t co = 0; co < cout; ++co) {
      const float cb = kb_bf16_to_f32(cbs[co]);
      for (int64_t i = 0; i < ho * wo; ++i) plane[i] = cb;
      for (int64_t ci = 0; ci < cin; ++ci) {
        const uint16_t* x_plane = xs + (n * cin + ci) * h * w;
        for (int64_t r = 0; r < kh; ++r) {
          for (int64_t s = 0; s < kw; ++s) {
            const float w_tap = kb_bf16_to_f32(ws[((co * cin + ci) * kh + r) * kw + s]);
            for (int64_t oh = 0; oh < ho; ++oh) {
              const uint16_t* x_row = x_plane + (oh + r) * w + s;
              float* y_row = plane.data() + oh * wo;
              for (int64_t ow = 0; ow < wo; ++ow) y_row[ow] += w_tap * kb_bf16_to_f32(x_row[ow]);
            }
          }
        }
      }
      const float b = kb_bf16_to_f32(bs[co]);
      uint16_t* y_plane = ys + (n * cout + co) * ho * wo;
      for (int64_t i = 0; i < ho * wo; ++i)
        y_plane[i] = kb_f32_to_bf16((plane[i] > 0.0f ? plane[i] : 0.0f) + b);
    }
  }
  return 0;
}
