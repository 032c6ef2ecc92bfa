"""50k_Matmul_GELU_Softmax in JAX: softmax(gelu(x @ weight + bias)), f32 throughout, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "50k_Matmul_GELU_Softmax"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        return (jax.nn.softmax(jax.nn.gelu(y), axis=1).astype(x.dtype),)  # tanh-form GELU

    return program
