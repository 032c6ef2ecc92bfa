"""48k_Matmul_BatchNorm_BiasAdd_Divide_Swish in JAX: swish(((BatchNorm_eval(x @ weight + linear_bias)
+ bias) / 1.0), f32 accumulation and epilogue, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "48k_Matmul_BatchNorm_BiasAdd_Divide_Swish"
OUTPUTS = ("out",)

BN_EPS = 1e-5


def build(params):
    del params

    @jax.jit
    def program(x, weight, linear_bias, bn_scale, bn_bias, bn_mean, bn_var, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + linear_bias.astype(f32)
        y = (y - bn_mean.astype(f32)) / jnp.sqrt(bn_var.astype(f32) + BN_EPS)
        y = y * bn_scale.astype(f32) + bn_bias.astype(f32)
        y = (y + bias.astype(f32)) / 1.0
        return ((y * jax.nn.sigmoid(y)).astype(x.dtype),)

    return program
