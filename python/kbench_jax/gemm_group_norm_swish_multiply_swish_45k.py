"""45k_Gemm_GroupNorm_Swish_Multiply_Swish in JAX: swish(swish(groupnorm(x @ W.T + b)) * m),
f32 throughout, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "45k_Gemm_GroupNorm_Swish_Multiply_Swish"
OUTPUTS = ("out",)


def build(params):
    num_groups = int(params["num_groups"])

    @jax.jit
    def program(x, gemm_weight, gemm_bias, gn_weight, gn_bias, multiply_weight):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), gemm_weight.astype(f32).T) + gemm_bias.astype(f32)
        rows, cols = y.shape
        g = y.reshape(rows, num_groups, cols // num_groups)
        mean = jnp.mean(g, axis=-1, keepdims=True)
        var = jnp.var(g, axis=-1, keepdims=True)
        g = ((g - mean) / jnp.sqrt(var + 1e-5)).reshape(rows, cols)
        g = g * gn_weight.astype(f32) + gn_bias.astype(f32)
        g = jax.nn.silu(g) * multiply_weight.astype(f32)
        return (jax.nn.silu(g).astype(x.dtype),)

    return program
