"""23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp in JAX: row sums of x @ weight.T + bias (keepdims),
then max, mean, logsumexp and logsumexp over the size-1 axis (identities); f32 inside, bf16 (M, 1)
result."""

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

NAME = "23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32).T) + bias.astype(f32)
        y = jnp.sum(y, axis=1, keepdims=True)
        y = jnp.max(y, axis=1, keepdims=True)
        y = jnp.mean(y, axis=1, keepdims=True)
        y = logsumexp(y, axis=1, keepdims=True)
        y = logsumexp(y, axis=1, keepdims=True)
        return (y.astype(x.dtype),)

    return program
