"""14p_Ragged_Dot in JAX: out[g] = x[g] @ weights[g] (einsum gmk,gkn->gmn), f32 accumulation, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "14p_Ragged_Dot"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weights):
        f32 = jnp.float32
        out = jnp.einsum("gmk,gkn->gmn", x.astype(f32), weights.astype(f32))
        return (out.astype(x.dtype),)

    return program
