"""28k_ConvTranspose3d_LayerNorm_GELU_Scaling in JAX: the transposed conv as the translation writes it
(zero-dilated input, padding k-1-p, flipped kernel), + bias, LayerNorm over W, tanh GELU, * 1.0."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "28k_ConvTranspose3d_LayerNorm_GELU_Scaling"
OUTPUTS = ("out",)
KERNEL, STRIDE, PADDING = 4, 2, 1
SCALING = 1.0


def build(params):
    del params

    @jax.jit
    def program(x, conv_weight, conv_bias, ln_weight, ln_bias):
        f32 = jnp.float32
        # (Cin, Cout, k, k, k) -> (Cout, Cin, k, k, k), spatially flipped.
        w = jnp.flip(conv_weight.astype(f32), axis=(2, 3, 4)).transpose(1, 0, 2, 3, 4)
        pad = KERNEL - 1 - PADDING
        y = lax.conv_general_dilated(
            x.astype(f32), w, (1, 1, 1), [(pad, pad)] * 3, lhs_dilation=(STRIDE,) * 3,
            dimension_numbers=("NCDHW", "OIDHW", "NCDHW"))
        y = y + conv_bias.astype(f32)[None, :, None, None, None]
        mean = jnp.mean(y, axis=-1, keepdims=True)
        var = jnp.var(y, axis=-1, keepdims=True)
        y = (y - mean) / jnp.sqrt(var + 1e-5) * ln_weight.astype(f32) + ln_bias.astype(f32)
        return ((jax.nn.gelu(y, approximate=True) * SCALING).astype(x.dtype),)

    return program
