"""19k_Matmul_Subtract_Multiply_ReLU in JAX: relu((x @ weight + bias - 2.0) * 1.5), f32 accumulation
and epilogue, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "19k_Matmul_Subtract_Multiply_ReLU"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        y = (y - 2.0) * 1.5
        return (jax.nn.relu(y).astype(x.dtype),)

    return program
