"""8p_GEMM in JAX: out = A @ B on bf16 operands, f32 accumulation, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "8p_GEMM"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(a, b):
        f32 = jnp.float32
        return (jnp.dot(a.astype(f32), b.astype(f32)).astype(a.dtype),)

    return program
