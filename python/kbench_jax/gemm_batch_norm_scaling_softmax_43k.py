"""43k_Gemm_BatchNorm_Scaling_Softmax in JAX: softmax(scale * batchnorm_eval(x @ weight + bias)),
f32 throughout, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "43k_Gemm_BatchNorm_Scaling_Softmax"
OUTPUTS = ("out",)


def build(params):
    bn_eps = float(params["bn_eps"])

    @jax.jit
    def program(x, weight, bias, bn_scale, bn_bias, bn_mean, bn_var, scale):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        normalized = (y - bn_mean.astype(f32)) / jnp.sqrt(bn_var.astype(f32) + bn_eps)
        z = scale.astype(f32) * (bn_scale.astype(f32) * normalized + bn_bias.astype(f32))
        return (jax.nn.softmax(z, axis=1).astype(x.dtype),)

    return program
