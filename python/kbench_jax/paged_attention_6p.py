"""6p_Paged_Attention in JAX: GQA decode over a paged KV cache, scores and softmax in f32."""

import jax
import jax.numpy as jnp

NAME = "6p_Paged_Attention"
OUTPUTS = ("out",)


def build(params):
    del params

    @jax.jit
    def program(queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens):
        f32 = jnp.float32
        num_seqs, num_q_heads, head_dim = queries.shape
        _, page_size, num_kv_heads, _ = k_pages.shape
        capacity = page_indices.shape[1] * page_size
        group = num_q_heads // num_kv_heads

        def attend_one_seq(seq):
            q = jax.lax.dynamic_slice(queries, (cu_q_lens[seq], 0, 0), (1, num_q_heads, head_dim))
            q = q[0].astype(f32).reshape(num_kv_heads, group, head_dim)
            pages = page_indices[seq]
            k = k_pages[pages].reshape(capacity, num_kv_heads, head_dim).astype(f32)
            v = v_pages[pages].reshape(capacity, num_kv_heads, head_dim).astype(f32)
            # The KV-head repeat as a grouped einsum: query head h*G + g reads KV head h.
            scores = jnp.einsum("hgd,khd->hgk", q, k) * (head_dim ** -0.5)
            mask = jnp.arange(capacity) < kv_lens[seq]
            scores = jnp.where(mask[None, None, :], scores, -1e30)
            probs = jax.nn.softmax(scores, axis=-1)
            return jnp.einsum("hgk,khd->hgd", probs, v).reshape(num_q_heads, head_dim)

        out = jax.vmap(attend_one_seq)(jnp.arange(num_seqs))
        return (out.astype(queries.dtype),)

    return program
