"""5p_Flex_Attention in JAX: causal MHA with an additive relative-position bias, f32 softmax."""

import jax
import jax.numpy as jnp

NAME = "5p_Flex_Attention"
OUTPUTS = ("out",)


def build(params):
    del params  # no scalar parameters; the scale is D^-0.5

    @jax.jit
    def program(q, k, v, rel_pos_bias):
        seq_len, head_dim = q.shape[2], q.shape[3]
        f32 = jnp.float32
        scores = jnp.einsum("bhqd,bhkd->bhqk", q.astype(f32), k.astype(f32)) * (head_dim ** -0.5)
        scores = scores + rel_pos_bias.astype(f32)[None]  # score_mod: per-head bias, every batch
        mask = jnp.tril(jnp.ones((seq_len, seq_len), dtype=bool))
        scores = jnp.where(mask, scores, -1e30)
        probs = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bhkd->bhqd", probs, v.astype(f32))
        return (out.astype(q.dtype),)

    return program
