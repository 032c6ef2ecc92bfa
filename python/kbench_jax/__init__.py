"""JAX programs for kbench's workloads, written from the spec, and the registry the runner uses.

Each workload module defines NAME (the kbench workload name), OUTPUTS (the output names in the order
the program returns them) and build(params) -> a jitted function taking the inputs in kbench's call
order (`input_order` in workload.json). Inputs arrive in the dtypes the workload declares (bf16 as
jnp.bfloat16); outputs leave in the workload's dtypes.

Precision, as a careful JAX user writes it: matmuls accumulate in f32, softmaxes and their
statistics run in f32, intermediates stay f32 and only the result is rounded to bf16. The matmuls
widen their bf16 operands to f32 explicitly (`a.astype(f32) @ b.astype(f32)`): that is what XLA:CPU
itself lowers a plain bf16 `jnp.dot` to (two converts and an f32 dot), whereas
`preferred_element_type=jnp.float32` on bf16 operands selects its mixed bf16 dot, which measured
1.3-2x slower on an Ice Lake core without AVX512-BF16 (docs/baselines.md, "XLA:CPU peer"). Both
accumulate in f32.
"""

from kbench_jax import (
    conv2d_activation_batch_norm_34k,
    conv2d_gelu_global_avg_pool_39k,
    conv2d_group_norm_tanh_hard_swish_residual_add_log_sum_exp_46k,
    conv2d_instance_norm_divide_22k,
    conv2d_relu_bias_add_18k,
    conv3d_group_norm_mean_25k,
    conv3d_mish_tanh_33k,
    conv_transpose3d_layer_norm_gelu_scaling_28k,
    cross_entropy_13p,
    flash_attention_1p,
    gemm_8p,
    gemm_add_relu_41k,
    rmsnorm_12p,
    swiglu_mlp_9p,
)

# One explicit list, in `kbench list` order.
PROGRAMS = {
    m.NAME: m
    for m in (
        flash_attention_1p,
        gemm_8p,
        swiglu_mlp_9p,
        rmsnorm_12p,
        cross_entropy_13p,
        gemm_add_relu_41k,
        conv2d_relu_bias_add_18k,
        conv2d_instance_norm_divide_22k,
        conv3d_group_norm_mean_25k,
        conv_transpose3d_layer_norm_gelu_scaling_28k,
        conv3d_mish_tanh_33k,
        conv2d_activation_batch_norm_34k,
        conv2d_gelu_global_avg_pool_39k,
        conv2d_group_norm_tanh_hard_swish_residual_add_log_sum_exp_46k,
    )
}
