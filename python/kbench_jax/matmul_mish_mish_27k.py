"""27k_Matmul_Mish_Mish in JAX: mish(mish(x @ weight + bias)), f32 accumulation and epilogue, bf16
result."""

import jax
import jax.numpy as jnp

NAME = "27k_Matmul_Mish_Mish"
OUTPUTS = ("out",)


def _mish(y):
    return y * jnp.tanh(jax.nn.softplus(y))


def build(params):
    del params

    @jax.jit
    def program(x, weight, bias):
        f32 = jnp.float32
        y = jnp.dot(x.astype(f32), weight.astype(f32)) + bias.astype(f32)
        return (_mish(_mish(y)).astype(x.dtype),)

    return program
