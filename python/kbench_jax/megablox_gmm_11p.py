"""11p_Megablox_GMM in JAX: grouped matmul over row runs of group_sizes, as the jittable reference_gmm
writes it (lax.scan over groups, a dynamic_slice of static height max_expert_size, a row mask),
f32 accumulation, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "11p_Megablox_GMM"
OUTPUTS = ("out",)


def build(params):
    max_expert_size = int(params["max_expert_size"])

    @jax.jit
    def program(lhs, rhs, group_sizes):
        f32 = jnp.float32
        m, k = lhs.shape
        n = rhs.shape[2]
        starts = jnp.cumsum(group_sizes) - group_sizes
        padded = jnp.pad(lhs.astype(f32), ((0, max_expert_size), (0, 0)))
        rows = jnp.arange(max_expert_size)

        def body(acc, group):
            w, start, size = group
            x = jax.lax.dynamic_slice(padded, (start, 0), (max_expert_size, k))
            y = jnp.where((rows < size)[:, None], jnp.dot(x, w.astype(f32)), 0.0)
            current = jax.lax.dynamic_slice(acc, (start, 0), (max_expert_size, n))
            return jax.lax.dynamic_update_slice(acc, current + y, (start, 0)), None

        acc = jnp.zeros((m + max_expert_size, n), f32)
        acc, _ = jax.lax.scan(body, acc, (rhs, starts, group_sizes))
        return (acc[:m].astype(lhs.dtype),)

    return program
