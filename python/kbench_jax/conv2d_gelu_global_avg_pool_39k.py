"""39k_Conv2d_GELU_GlobalAvgPool in JAX: mean_hw(gelu_tanh(conv2d_3x3_valid(x) + bias)), f32 inside."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "39k_Conv2d_GELU_GlobalAvgPool"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = lax.conv_general_dilated(
            x.astype(f32), weight.astype(f32), (1, 1), "VALID",
            dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = jax.nn.gelu(y + bias.astype(f32)[None, :, None, None], approximate=True)
        return (jnp.mean(y, axis=(2, 3)).astype(x.dtype),)

    return program
