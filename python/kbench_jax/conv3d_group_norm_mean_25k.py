"""25k_Conv3d_GroupNorm_Mean in JAX: mean_cdhw(GroupNorm8(conv3d_3x3x3_valid(x) + bias)), f32 inside."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "25k_Conv3d_GroupNorm_Mean"
OUTPUTS = ("out",)
GROUPS = 8


def build(params):
    del params

    @jax.jit
    def program(x, weight, conv_bias, gamma, beta):
        f32 = jnp.float32
        y = lax.conv_general_dilated(
            x.astype(f32), weight.astype(f32), (1, 1, 1), "VALID",
            dimension_numbers=("NCDHW", "OIDHW", "NCDHW"))
        y = y + conv_bias.astype(f32)[None, :, None, None, None]
        n, c, d, h, w = y.shape
        g = y.reshape(n, GROUPS, c // GROUPS, d, h, w)
        mean = jnp.mean(g, axis=(2, 3, 4, 5), keepdims=True)
        var = jnp.var(g, axis=(2, 3, 4, 5), keepdims=True)
        y = ((g - mean) / jnp.sqrt(var + 1e-5)).reshape(n, c, d, h, w)
        y = y * gamma.astype(f32)[None, :, None, None, None] + beta.astype(f32)[None, :, None, None, None]
        return (jnp.mean(y, axis=(1, 2, 3, 4)).astype(x.dtype),)

    return program
