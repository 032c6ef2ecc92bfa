"""A program with a Python-int argument after its tensors, as JAXBench's 11p has, written for
kbench's tests from the spec of 11p_Megablox_GMM: each group's rows of lhs (at most
max_expert_size of them) times its weight, f32 accumulation, rows no group covers zero."""
import jax
import jax.numpy as jnp

CONFIG = {'name': 'test_grouped_matmul', 'num_experts': 128}


def workload(lhs, rhs, group_sizes, max_expert_size):
    rows = lhs.shape[0]
    ends = jnp.cumsum(group_sizes)
    starts = ends - group_sizes
    padded = jnp.pad(lhs, ((0, max_expert_size), (0, 0)))
    offsets = jnp.arange(max_expert_size)
    out = jnp.zeros((rows + max_expert_size, rhs.shape[2]), jnp.float32)
    for g in range(rhs.shape[0]):
        block = jax.lax.dynamic_slice_in_dim(padded, starts[g], max_expert_size)
        product = jnp.dot(block, rhs[g], preferred_element_type=jnp.float32)
        product = jnp.where((offsets < group_sizes[g])[:, None], product, 0.0)
        current = jax.lax.dynamic_slice_in_dim(out, starts[g], max_expert_size)
        out = jax.lax.dynamic_update_slice_in_dim(out, current + product, starts[g], 0)
    return out[:rows].astype(lhs.dtype)
