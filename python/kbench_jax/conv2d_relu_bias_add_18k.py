"""18k_Conv2D_ReLU_BiasAdd in JAX: relu(conv2d_3x3_valid(x, weight) + conv_bias) + bias, f32 inside."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "18k_Conv2D_ReLU_BiasAdd"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, conv_bias, bias):
        f32 = jnp.float32
        y = lax.conv_general_dilated(
            x.astype(f32), weight.astype(f32), (1, 1), "VALID",
            dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = jax.nn.relu(y + conv_bias.astype(f32)[None, :, None, None]) + bias.astype(f32)[None]
        return (y.astype(x.dtype),)

    return program
