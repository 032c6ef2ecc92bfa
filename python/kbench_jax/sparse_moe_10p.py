"""10p_Sparse_MoE in JAX: top-2 of 8 MoE routed on the bf16 router logits, softmax over the two,
every expert's SwiGLU evaluated densely as the original does, one-hot weighted combine; f32
accumulation and intermediates, bf16 result."""

import jax
import jax.numpy as jnp

NAME = "10p_Sparse_MoE"
OUTPUTS = ("out",)
TOP_K = 2


def build(params):
    del params

    @jax.jit
    def program(x, router_weights, expert_gate_kernels, expert_up_kernels, expert_down_kernels):
        f32 = jnp.float32
        num_experts = router_weights.shape[-1]
        x32 = x.astype(f32)
        # The original's logits are a bf16 tensor (bf16 dot): route on them.
        logits = jnp.dot(x32, router_weights.astype(f32)).astype(x.dtype).astype(f32)
        top_logits, top_idx = jax.lax.top_k(logits, TOP_K)
        probs = jax.nn.softmax(top_logits, axis=-1)
        gate = jax.nn.silu(jnp.einsum("bse,nem->bsnm", x32, expert_gate_kernels.astype(f32)))
        up = jnp.einsum("bse,nem->bsnm", x32, expert_up_kernels.astype(f32))
        expert_out = jnp.einsum("bsnm,nme->bsne", gate * up, expert_down_kernels.astype(f32))
        weights = (jax.nn.one_hot(top_idx, num_experts, dtype=f32) * probs[..., None]).sum(axis=2)
        out = jnp.einsum("bsne,bsn->bse", expert_out, weights)
        return (out.astype(x.dtype),)

    return program
