"""38k_Matmul_Dropout_Softmax in JAX: softmax(x @ weight.T + bias), f32 throughout, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "38k_Matmul_Dropout_Softmax"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32).T) + bias.astype(f32)
        # Dropout is the identity at inference.
        return (jax.nn.softmax(y, axis=1).astype(x.dtype),)

    return program
