"""47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh in JAX: clip(gelu(tanh(swish(x @ weight + bias +
add_value))), -1, 1), f32 accumulation and epilogue, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias, add_value):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32) + add_value.astype(f32)
        y = jnp.tanh(y * jax.nn.sigmoid(y))
        y = jnp.clip(jax.nn.gelu(y), -1.0, 1.0)
        return (y.astype(x.dtype),)

    return program
