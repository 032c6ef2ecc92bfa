"""30k_Matmul_Scaling_ResidualAdd in JAX: y * 0.5 + y for y = x @ weight + bias, f32 accumulation and
epilogue, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "30k_Matmul_Scaling_ResidualAdd"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        return ((y * 0.5 + y).astype(x.dtype),)

    return program
