"""7p_Ragged_Paged_Attention in JAX: one mixed prefill + decode step over a paged KV cache.

Like the original (JAX's ref_ragged_paged_attention), the program loops over the active sequences
with slices that depend on the int32 inputs, so it runs eagerly: each sequence's ops are XLA:CPU
calls. Scores and softmax in f32; the output is rounded to bf16 once and scattered into zeros.
"""

import jax
import jax.numpy as jnp
import numpy as np

NAME = "7p_Ragged_Paged_Attention"
OUTPUTS = ("out",)
MASK_VALUE = -0.7 * float(np.finfo(np.float32).max)


@jax.jit
def _attend(q, k, v, kv_len):
    """q (q_len, H_q, D), k/v (S_max, H_kv, D) f32 -> (q_len, H_q, D) f32."""
    q_len, num_q_heads, head_dim = q.shape
    capacity, num_kv_heads, _ = k.shape
    group = num_q_heads // num_kv_heads
    qg = q.reshape(q_len, num_kv_heads, group, head_dim)
    scores = jnp.einsum("qhgd,khd->hgqk", qg, k) * (head_dim ** -0.5)
    q_span = (kv_len - q_len) + jax.lax.broadcasted_iota(jnp.int32, scores.shape, 2)
    kv_span = jax.lax.broadcasted_iota(jnp.int32, scores.shape, 3)
    mask = (q_span < kv_span) | (kv_span >= kv_len)
    scores = scores + jnp.where(mask, MASK_VALUE, 0.0)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("hgqk,khd->qhgd", probs, v)
    return out.reshape(q_len, num_q_heads, head_dim)


def build(params):
    del params

    def program(queries, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs):
        f32 = jnp.float32
        _, page_size, combined_heads, head_dim = kv_pages.shape
        num_kv_heads = combined_heads // 2
        cu = np.asarray(cu_q_lens)
        lens = np.asarray(kv_lens)
        out = jnp.zeros(queries.shape, dtype=queries.dtype)
        for i in range(int(np.asarray(num_seqs)[0])):
            q_start, q_end = int(cu[i]), int(cu[i + 1])
            if q_end == q_start:
                continue
            pages = kv_pages[page_indices[i]]
            k = pages[:, :, 0::2, :].reshape(-1, num_kv_heads, head_dim).astype(f32)
            v = pages[:, :, 1::2, :].reshape(-1, num_kv_heads, head_dim).astype(f32)
            seq_out = _attend(queries[q_start:q_end].astype(f32), k, v, jnp.int32(lens[i]))
            out = out.at[q_start:q_end].set(seq_out.astype(queries.dtype))
        return (out,)

    return program
