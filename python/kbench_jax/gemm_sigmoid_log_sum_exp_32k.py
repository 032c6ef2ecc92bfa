"""32k_Gemm_Sigmoid_LogSumExp in JAX: logsumexp over features of sigmoid(x @ w1.T + b1) @ w2.T + b2;
f32 inside, bf16 (M,) result."""

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp

NAME = "32k_Gemm_Sigmoid_LogSumExp"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, w1, b1, w2, b2):
        f32 = jnp.float32
        h = jax.nn.sigmoid(jnp.dot(x.astype(f32), w1.astype(f32).T) + b1.astype(f32))
        z = jnp.dot(h, w2.astype(f32).T) + b2.astype(f32)
        return (logsumexp(z, axis=1).astype(x.dtype),)

    return program
