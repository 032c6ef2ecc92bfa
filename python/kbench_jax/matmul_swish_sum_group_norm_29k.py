"""29k_Matmul_Swish_Sum_GroupNorm in JAX: groupnorm(swish(x @ weight) + bias), f32 throughout,
bf16 result."""

import jax
import jax.numpy as jnp

NAME = "29k_Matmul_Swish_Sum_GroupNorm"
OUTPUTS = ("out",)


def build(params):
    num_groups = int(params["num_groups"])

    @jax.jit
    def program(x, weight, bias, gn_weight, gn_bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32))
        y = jax.nn.sigmoid(y) * y + bias.astype(f32)
        rows, cols = y.shape
        g = y.reshape(rows, num_groups, cols // num_groups)
        mean = jnp.mean(g, axis=-1, keepdims=True)
        var = jnp.var(g, axis=-1, keepdims=True)
        g = ((g - mean) / jnp.sqrt(var + 1e-5)).reshape(rows, cols)
        return ((g * gn_weight.astype(f32) + gn_bias.astype(f32)).astype(x.dtype),)

    return program
