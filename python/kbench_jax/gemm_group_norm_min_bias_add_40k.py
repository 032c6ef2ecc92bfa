"""40k_Gemm_GroupNorm_Min_BiasAdd in JAX: min over features of groupnorm(x @ W.T + b), reshaped to
(1, 1, M, 1) plus a (1, N, 1, 1) bias; f32 throughout, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "40k_Gemm_GroupNorm_Min_BiasAdd"
OUTPUTS = ("out",)


def build(params):
    num_groups = int(params["num_groups"])

    @jax.jit
    def program(x, weight, linear_bias, gn_weight, gn_bias, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32).T) + linear_bias.astype(f32)
        rows, cols = y.shape
        g = y.reshape(rows, num_groups, cols // num_groups)
        mean = jnp.mean(g, axis=2, keepdims=True)
        var = jnp.var(g, axis=2, keepdims=True)
        g = ((g - mean) / jnp.sqrt(var + 1e-5)).reshape(rows, cols)
        g = g * gn_weight.astype(f32) + gn_bias.astype(f32)
        row_min = jnp.min(g, axis=1, keepdims=True).reshape(1, 1, rows, 1)
        return ((row_min + bias.astype(f32)).astype(x.dtype),)

    return program
