"""34k_Conv2d_Activation_BatchNorm in JAX: BatchNorm2d in training mode (batch statistics) of
mish(conv2d_3x3_valid(x) + bias), f32 inside."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "34k_Conv2d_Activation_BatchNorm"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, conv_weight, conv_bias, bn_weight, bn_bias):
        f32 = jnp.float32
        y = lax.conv_general_dilated(
            x.astype(f32), conv_weight.astype(f32), (1, 1), "VALID",
            dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = y + conv_bias.astype(f32)[None, :, None, None]
        y = jnp.tanh(jax.nn.softplus(y)) * y
        mean = jnp.mean(y, axis=(0, 2, 3), keepdims=True)
        var = jnp.var(y, axis=(0, 2, 3), keepdims=True)
        y = (y - mean) / jnp.sqrt(var + 1e-5)
        y = y * bn_weight.astype(f32)[None, :, None, None] + bn_bias.astype(f32)[None, :, None, None]
        return (y.astype(x.dtype),)

    return program
