"""35k_Gemm_Scaling_Hardtanh_GELU in JAX: the explicit tanh GELU of clip((x @ weight + bias) * 0.5,
-2, 2), f32 accumulation and epilogue, bf16 result."""

import jax
import jax.numpy as jnp
import numpy as np

NAME = "35k_Gemm_Scaling_Hardtanh_GELU"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        y = jnp.clip(y * 0.5, -2.0, 2.0)
        y = 0.5 * y * (1.0 + jnp.tanh(np.sqrt(2.0 / np.pi) * (y + 0.044715 * y**3)))
        return (y.astype(x.dtype),)

    return program
