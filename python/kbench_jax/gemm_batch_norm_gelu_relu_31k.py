"""31k_Gemm_BatchNorm_GELU_ReLU in JAX: relu(gelu(batchnorm_train(x @ W.T + b))), batch statistics
over axis 0, f32 throughout, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "31k_Gemm_BatchNorm_GELU_ReLU"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, gemm_weight, gemm_bias, bn_weight, bn_bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), gemm_weight.astype(f32).T) + gemm_bias.astype(f32)
        mean = jnp.mean(y, axis=0, keepdims=True)
        var = jnp.mean((y - mean) ** 2, axis=0, keepdims=True)
        z = (y - mean) / jnp.sqrt(var + 1e-5) * bn_weight.astype(f32) + bn_bias.astype(f32)
        return (jax.nn.relu(jax.nn.gelu(z)).astype(x.dtype),)  # tanh-form GELU

    return program
