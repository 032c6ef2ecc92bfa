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
    bmm_instance_norm_sum_residual_add_multiply_26k,
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
    flex_attention_5p,
    gemm_8p,
    gemm_add_relu_41k,
    gemm_batch_norm_gelu_relu_31k,
    gemm_batch_norm_scaling_softmax_43k,
    gemm_divide_sum_scaling_21k,
    gemm_group_norm_min_bias_add_40k,
    gemm_group_norm_swish_multiply_swish_45k,
    gemm_max_subtract_gelu_42k,
    gemm_multiply_leaky_relu_20k,
    gemm_scaling_hardtanh_gelu_35k,
    gemm_sigmoid_log_sum_exp_32k,
    gqa_attention_2p,
    mamba2_ssd_16p,
    matmul_add_swish_tanh_gelu_hardtanh_47k,
    matmul_avg_pool_gelu_scale_max_49k,
    matmul_batch_norm_bias_add_divide_swish_48k,
    matmul_divide_gelu_44k,
    matmul_dropout_softmax_38k,
    matmul_gelu_softmax_50k,
    matmul_mish_mish_27k,
    matmul_scale_residual_add_clamp_log_sum_exp_mish_24k,
    matmul_scaling_residual_add_30k,
    matmul_sigmoid_sum_36k,
    matmul_subtract_multiply_relu_19k,
    matmul_sum_max_avg_pool_log_sum_exp_log_sum_exp_23k,
    matmul_swish_scaling_37k,
    matmul_swish_sum_group_norm_29k,
    megablox_gmm_11p,
    mla_attention_3p,
    paged_attention_6p,
    ragged_dot_14p,
    ragged_paged_attention_7p,
    retnet_retention_15p,
    rmsnorm_12p,
    sparse_attention_4p,
    sparse_moe_10p,
    swiglu_mlp_9p,
    triangle_multiplication_17p,
)

# One explicit list, in `kbench list` order.
PROGRAMS = {
    m.NAME: m
    for m in (
        flash_attention_1p,
        gqa_attention_2p,
        mla_attention_3p,
        sparse_attention_4p,
        flex_attention_5p,
        paged_attention_6p,
        ragged_paged_attention_7p,
        gemm_8p,
        swiglu_mlp_9p,
        sparse_moe_10p,
        megablox_gmm_11p,
        rmsnorm_12p,
        cross_entropy_13p,
        ragged_dot_14p,
        retnet_retention_15p,
        mamba2_ssd_16p,
        triangle_multiplication_17p,
        conv2d_relu_bias_add_18k,
        matmul_subtract_multiply_relu_19k,
        gemm_multiply_leaky_relu_20k,
        gemm_divide_sum_scaling_21k,
        conv2d_instance_norm_divide_22k,
        matmul_sum_max_avg_pool_log_sum_exp_log_sum_exp_23k,
        matmul_scale_residual_add_clamp_log_sum_exp_mish_24k,
        conv3d_group_norm_mean_25k,
        bmm_instance_norm_sum_residual_add_multiply_26k,
        matmul_mish_mish_27k,
        conv_transpose3d_layer_norm_gelu_scaling_28k,
        matmul_swish_sum_group_norm_29k,
        matmul_scaling_residual_add_30k,
        gemm_batch_norm_gelu_relu_31k,
        gemm_sigmoid_log_sum_exp_32k,
        conv3d_mish_tanh_33k,
        conv2d_activation_batch_norm_34k,
        gemm_scaling_hardtanh_gelu_35k,
        matmul_sigmoid_sum_36k,
        matmul_swish_scaling_37k,
        matmul_dropout_softmax_38k,
        conv2d_gelu_global_avg_pool_39k,
        gemm_group_norm_min_bias_add_40k,
        gemm_add_relu_41k,
        gemm_max_subtract_gelu_42k,
        gemm_batch_norm_scaling_softmax_43k,
        matmul_divide_gelu_44k,
        gemm_group_norm_swish_multiply_swish_45k,
        conv2d_group_norm_tanh_hard_swish_residual_add_log_sum_exp_46k,
        matmul_add_swish_tanh_gelu_hardtanh_47k,
        matmul_batch_norm_bias_add_divide_swish_48k,
        matmul_avg_pool_gelu_scale_max_49k,
        matmul_gelu_softmax_50k,
    )
}
