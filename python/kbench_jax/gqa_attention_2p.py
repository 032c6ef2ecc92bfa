"""2p_GQA_Attention in JAX: grouped-query causal attention in BSHD, scores and softmax in f32."""

import jax
import jax.numpy as jnp

NAME = "2p_GQA_Attention"
OUTPUTS = ("out",)


def build(params):
    del params  # no scalar parameters; the scale is D^-0.5

    @jax.jit
    def program(query, key, value):
        seq_len, num_query_heads, head_dim = query.shape[1], query.shape[2], query.shape[3]
        group = num_query_heads // key.shape[2]
        f32 = jnp.float32
        # K/V repeated G times along the head axis: query head h reads kv head h // G.
        k = jnp.repeat(key.astype(f32), group, axis=2)
        v = jnp.repeat(value.astype(f32), group, axis=2)
        # Scores kept in f32 (the original runs them and the softmax in bf16).
        scores = jnp.einsum("bqhd,bkhd->bhqk", query.astype(f32), k) * (head_dim ** -0.5)
        mask = jnp.tril(jnp.ones((seq_len, seq_len), dtype=bool))
        scores = jnp.where(mask, scores, -1e9)
        probs = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bkhd->bqhd", probs, v)  # back to (B, S, Hq, D)
        return (out.astype(query.dtype),)

    return program
