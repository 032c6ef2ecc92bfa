"""49k_Matmul_AvgPool_GELU_Scale_Max in JAX: v = x @ weight + bias, AvgPool1d(16, stride 16) over the
features by reduce_window, tanh GELU, * 2, max over the pooled features; f32 inside, bf16 (M,)
result."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "49k_Matmul_AvgPool_GELU_Scale_Max"
OUTPUTS = ("out",)

POOL = 16


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        v = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        v = lax.reduce_window(v, 0.0, lax.add, (1, POOL), (1, POOL), "VALID") / POOL
        v = jax.nn.gelu(v) * 2.0
        return (jnp.max(v, axis=1).astype(x.dtype),)

    return program
