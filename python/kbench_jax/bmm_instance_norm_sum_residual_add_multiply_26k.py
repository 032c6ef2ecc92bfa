"""26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply in JAX, as kbench restores it: v = x @ bmm_weight.T +
bmm_bias, each row normalized over its features (eps 1e-5) with the per-feature in_weight and
in_bias, then (u + y) * y; f32 inside, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, y, bmm_weight, bmm_bias, in_weight, in_bias):
        f32 = jnp.float32
        v = jnp.dot(x.astype(f32), bmm_weight.astype(f32).T) + bmm_bias.astype(f32)
        mean = jnp.mean(v, axis=1, keepdims=True)
        var = jnp.mean(jnp.square(v - mean), axis=1, keepdims=True)
        u = (v - mean) / jnp.sqrt(var + 1e-5) * in_weight.astype(f32) + in_bias.astype(f32)
        yf = y.astype(f32)
        return (((u + yf) * yf).astype(x.dtype),)

    return program
