"""12p_RMSNorm in JAX: bf16(bf16(x * rsqrt(mean(x^2) + eps)) * scale), statistics in f32."""

import jax
import jax.numpy as jnp

NAME = "12p_RMSNorm"
OUTPUTS = ("out",)


def build(params):
    epsilon = float(params["epsilon"])

    @jax.jit
    def program(x, scale):
        x32 = x.astype(jnp.float32)
        mean_sq = jnp.mean(jnp.square(x32), axis=-1, keepdims=True)
        normed = (x32 * jax.lax.rsqrt(mean_sq + epsilon)).astype(x.dtype)  # cast back to x.dtype
        return (normed * scale.astype(x.dtype),)

    return program
