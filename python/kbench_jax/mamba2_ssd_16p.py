"""16p_Mamba2_SSD in JAX: the SSD quadratic form, scores, decay and normalization in f32.

a = sigmoid(A_log); c = cumsum(log(a + 1e-8)); L[i, j] = exp(c[i] - c[j]) for i >= j, else 0;
scores = (C B^T) * L in f32, divided by max(|row sum|, 1) (a row sum under 1e-6 counts as 1), then
times x. The normalized scores stay f32 here (JAXBench's program casts them to bf16 before the
second einsum); only the output is rounded to bf16.
"""

import jax
import jax.numpy as jnp

NAME = "16p_Mamba2_SSD"
OUTPUTS = ("out",)


def build(params):
    del params  # no scalar parameters

    @jax.jit
    def program(c, b, x, a_log):
        seq_len = c.shape[2]
        f32 = jnp.float32
        log_a_cumsum = jnp.cumsum(jnp.log(jax.nn.sigmoid(a_log.astype(f32)) + 1e-8), axis=-1)
        diff = log_a_cumsum[:, :, :, None] - log_a_cumsum[:, :, None, :]
        causal = jnp.tril(jnp.ones((seq_len, seq_len), dtype=bool))
        decay = jnp.exp(jnp.where(causal[None, None], diff, -1e30))
        scores = jnp.einsum("bhsd,bhtd->bhst", c.astype(f32), b.astype(f32)) * decay
        row_sum = jnp.sum(scores, axis=-1, keepdims=True)
        row_sum = jnp.where(jnp.abs(row_sum) < 1e-6, 1.0, row_sum)
        scores = scores / jnp.maximum(jnp.abs(row_sum), 1.0)
        out = jnp.einsum("bhst,bhtd->bhsd", scores, x.astype(f32))
        return (out.astype(c.dtype),)

    return program
