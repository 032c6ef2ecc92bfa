"""36k_Matmul_Sigmoid_Sum in JAX: sum over features of sigmoid(x @ weight + bias), keepdims; f32
inside, bf16 (M, 1) result."""

import jax
import jax.numpy as jnp

NAME = "36k_Matmul_Sigmoid_Sum"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        return (jnp.sum(jax.nn.sigmoid(y), axis=1, keepdims=True).astype(x.dtype),)

    return program
