"""9p_SwiGLU_MLP in JAX: (silu(x @ gate) * (x @ up)) @ down, f32 accumulation, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "9p_SwiGLU_MLP"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(x, gate_kernel, up_kernel, down_kernel):
        f32 = jnp.float32
        x32 = x.astype(f32)
        gate = jnp.dot(x32, gate_kernel.astype(f32))
        up = jnp.dot(x32, up_kernel.astype(f32))
        hidden = jax.nn.silu(gate) * up  # f32, fused by XLA into one pass
        out = jnp.dot(hidden, down_kernel.astype(f32))
        return (out.astype(x.dtype),)

    return program
