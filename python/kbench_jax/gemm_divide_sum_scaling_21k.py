"""21k_Gemm_Divide_Sum_Scaling in JAX: sum_j (x @ weight.T)[:, j] / 2 * 1.5 at HIGHEST precision, f32
throughout, bf16 (M, 1) result."""

import jax
import jax.numpy as jnp
from jax import lax

NAME = "21k_Gemm_Divide_Sum_Scaling"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight):
        f32 = jnp.float32
        y = lax.dot_general(
            x.astype(f32), weight.astype(f32), (((1,), (1,)), ((), ())), precision=lax.Precision.HIGHEST
        )
        y = y / 2.0
        y = jnp.sum(y, axis=1, keepdims=True)
        return ((y * 1.5).astype(x.dtype),)

    return program
