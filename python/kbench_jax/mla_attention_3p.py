"""3p_MLA_Attention in JAX: multi-head latent attention (DeepSeek-V3), f32 matmuls and softmax."""

import jax
import jax.numpy as jnp

NAME = "3p_MLA_Attention"
OUTPUTS = ("out",)
ROPE_THETA = 10000.0


def _rope_tables(rope, seq_len, dtype):
    """cos, sin of position * theta^(-2i/rope), i < rope/2, cast to x.dtype as the original does."""
    freqs = 1.0 / (ROPE_THETA ** (jnp.arange(0, rope, 2, dtype=jnp.float32) / rope))
    angles = jnp.outer(jnp.arange(seq_len, dtype=jnp.float32), freqs)
    return jnp.cos(angles).astype(dtype), jnp.sin(angles).astype(dtype)


def _rotate_half_split(x, cos, sin):
    """Half-split RoPE on (B, S, H, rope): [x1 c - x2 s, x1 s + x2 c]."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def build(params):
    del params  # the head split follows from the weights' shapes

    @jax.jit
    def program(x, q_down, q_up, kv_down, k_up, v_up, o_proj):
        f32 = jnp.float32
        batch, seq_len, _ = x.shape
        kvl = k_up.shape[0]
        rope = kv_down.shape[1] - kvl
        heads = (q_up.shape[1] - k_up.shape[1]) // rope
        nope = k_up.shape[1] // heads
        v_dim = v_up.shape[1] // heads

        xf = x.astype(f32)
        q = (xf @ q_down.astype(f32)) @ q_up.astype(f32)
        q = q.reshape(batch, seq_len, heads, nope + rope)
        q_nope, q_rope = q[..., :nope], q[..., nope:]
        kv = xf @ kv_down.astype(f32)
        k_latent, k_rope_raw = kv[..., :kvl], kv[..., kvl:]
        k_nope = (k_latent @ k_up.astype(f32)).reshape(batch, seq_len, heads, nope)
        v = (k_latent @ v_up.astype(f32)).reshape(batch, seq_len, heads, v_dim)
        cos, sin = _rope_tables(rope, seq_len, x.dtype)
        cos, sin = cos.astype(f32), sin.astype(f32)
        q_rope = _rotate_half_split(q_rope, cos, sin)
        k_rope = _rotate_half_split(
            jnp.broadcast_to(k_rope_raw[:, :, None, :], (batch, seq_len, heads, rope)), cos, sin)
        q_full = jnp.concatenate([q_nope, q_rope], axis=-1)
        k_full = jnp.concatenate([k_nope, k_rope], axis=-1)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q_full, k_full) * ((nope + rope) ** -0.5)
        mask = jnp.tril(jnp.ones((seq_len, seq_len), dtype=bool))
        scores = jnp.where(mask, scores, -1e9)
        probs = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(batch, seq_len, heads * v_dim)
        return ((out @ o_proj.astype(f32)).astype(x.dtype),)

    return program
