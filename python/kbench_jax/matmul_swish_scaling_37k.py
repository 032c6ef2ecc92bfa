"""37k_Matmul_Swish_Scaling in JAX: swish(x @ weight + bias) * 2.0, f32 accumulation and epilogue,
bf16 result."""

import jax
import jax.numpy as jnp

NAME = "37k_Matmul_Swish_Scaling"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        return ((y * jax.nn.sigmoid(y) * 2.0).astype(x.dtype),)

    return program
