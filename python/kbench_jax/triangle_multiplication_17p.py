"""17p_Triangle_Multiplication in JAX: AlphaFold2's outgoing triangle multiplicative update, f32
intermediates, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "17p_Triangle_Multiplication"
OUTPUTS = ("out",)
EPSILON = 1e-6


def build(params):
    del params

    @jax.jit
    def program(pair_act, mask, left_proj_w, right_proj_w, left_gate_w, right_gate_w,
                center_scale, out_proj_w, out_gate_w):
        f32 = jnp.float32
        pair = pair_act.astype(f32)
        act = pair * mask.astype(f32)
        left = jnp.dot(act, left_proj_w.astype(f32)) * jax.nn.sigmoid(
            jnp.dot(act, left_gate_w.astype(f32)))
        right = jnp.dot(act, right_proj_w.astype(f32)) * jax.nn.sigmoid(
            jnp.dot(act, right_gate_w.astype(f32)))
        result = jnp.einsum("ikc,jkc->ijc", left, right)
        rms = jnp.sqrt(jnp.mean(result * result, axis=-1, keepdims=True) + EPSILON)
        result = result / rms * center_scale.astype(f32)
        out = jnp.dot(result, out_proj_w.astype(f32)) * jax.nn.sigmoid(
            jnp.dot(pair, out_gate_w.astype(f32)))
        return (out.astype(pair_act.dtype),)

    return program
