"""A program laid out as JAXBench's are, written for kbench's tests from the spec of
29k_Matmul_Swish_Sum_GroupNorm: constants in a CONFIG dict and as literals inside workload(), sized
for the full workload. The tests run it unmodified on smaller exports (kbench_jax.original)."""
import jax
import jax.numpy as jnp

CONFIG = {
    'name': 'test_swish_group_norm',
    'batch_size': 8192,
    'in_features': 4096,
    'out_features': 4096,
    'num_groups': 64,
}


def workload(x, weight, bias, gn_weight, gn_bias):
    num_groups = 64
    out_features = 4096
    h = jnp.matmul(x, weight)
    h = h * jax.nn.sigmoid(h) + bias
    per_group = h.reshape(-1, num_groups, out_features // num_groups)
    centered = per_group - jnp.mean(per_group, axis=-1, keepdims=True)
    scaled = centered / jnp.sqrt(jnp.var(per_group, axis=-1, keepdims=True) + 1e-5)
    return scaled.reshape(-1, out_features) * gn_weight + gn_bias
