"""15p_RetNet_Retention in JAX: multi-scale retention, parallel form, qk and its normalization in f32.

gamma_h = 1 - 2^(-5-h); decay[h, i, j] = gamma_h^(i-j) for i >= j, else 0 (exp(log(gamma) *
max(i - j, 0)) masked, the original after its NaN fix); qk = (q k^T) * decay in f32, divided by
max(sum_j |qk|, 1), then times v. The normalized qk stays f32 here (JAXBench's program casts it to
bf16 before the second einsum); only the output is rounded to bf16.
"""

import jax
import jax.numpy as jnp

NAME = "15p_RetNet_Retention"
OUTPUTS = ("out",)


def build(params):
    del params  # no scalar parameters

    @jax.jit
    def program(query, key, value):
        num_heads, seq_len = query.shape[1], query.shape[2]
        f32 = jnp.float32
        gammas = 1.0 - jnp.exp2(-5.0 - jnp.arange(num_heads, dtype=f32))
        positions = jnp.arange(seq_len, dtype=f32)
        distance = positions[:, None] - positions[None, :]
        causal = (distance >= 0).astype(f32)
        decay = jnp.exp(jnp.log(gammas)[:, None, None] * jnp.maximum(distance, 0.0)[None]) * causal
        qk = jnp.einsum("bhsd,bhtd->bhst", query.astype(f32), key.astype(f32)) * decay[None]
        qk = qk / jnp.maximum(jnp.sum(jnp.abs(qk), axis=-1, keepdims=True), 1.0)
        out = jnp.einsum("bhst,bhtd->bhsd", qk, value.astype(f32))
        return (out.astype(query.dtype),)

    return program
