"""22k_Conv2d_InstanceNorm_Divide in JAX: InstanceNorm(conv2d_3x3_valid(x) + bias) / 2, f32 inside."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "22k_Conv2d_InstanceNorm_Divide"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, conv_bias, in_weight, in_bias):
        f32 = jnp.float32
        y = lax.conv_general_dilated(
            x.astype(f32), weight.astype(f32), (1, 1), "VALID",
            dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = y + conv_bias.astype(f32)[None, :, None, None]
        mean = jnp.mean(y, axis=(2, 3), keepdims=True)
        var = jnp.var(y, axis=(2, 3), keepdims=True)
        y = (y - mean) / jnp.sqrt(var + 1e-5)
        y = y * in_weight.astype(f32)[None, :, None, None] + in_bias.astype(f32)[None, :, None, None]
        return ((y / 2.0).astype(x.dtype),)

    return program
