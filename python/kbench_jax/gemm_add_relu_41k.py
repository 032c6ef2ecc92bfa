"""41k_Gemm_Add_ReLU in JAX: relu(x @ weight + bias), f32 accumulation and epilogue, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "41k_Gemm_Add_ReLU"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        return (jax.nn.relu(y).astype(x.dtype),)

    return program
