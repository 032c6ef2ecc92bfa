"""33k_Conv3d_Mish_Tanh in JAX: tanh(mish(conv3d_3x3x3_valid(x) + bias)), mish via log(1 + exp(y))."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "33k_Conv3d_Mish_Tanh"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = lax.conv_general_dilated(
            x.astype(f32), weight.astype(f32), (1, 1, 1), "VALID",
            dimension_numbers=("NCDHW", "OIDHW", "NCDHW"))
        y = y + bias.astype(f32)[None, :, None, None, None]
        y = y * jnp.tanh(jnp.log(1.0 + jnp.exp(y)))
        return (jnp.tanh(y).astype(x.dtype),)

    return program
