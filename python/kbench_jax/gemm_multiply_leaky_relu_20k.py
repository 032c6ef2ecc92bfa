"""20k_Gemm_Multiply_LeakyReLU in JAX: where(y >= 0, y, 0.1 y) for y = (x @ weight + bias) * 2.0,
f32 accumulation and epilogue, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "20k_Gemm_Multiply_LeakyReLU"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = (jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)) * 2.0
        return (jnp.where(y >= 0, y, 0.1 * y).astype(x.dtype),)

    return program
