"""44k_Matmul_Divide_GELU in JAX: gelu((x @ weight + bias) / 10.0) with jax.nn.gelu's default tanh
form, f32 accumulation and epilogue, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "44k_Matmul_Divide_GELU"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = (jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)) / 10.0
        return (jax.nn.gelu(y).astype(x.dtype),)

    return program
