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
    cross_entropy_13p,
    flash_attention_1p,
    gemm_8p,
    gemm_add_relu_41k,
    gemm_divide_sum_scaling_21k,
    gemm_max_subtract_gelu_42k,
    gemm_sigmoid_log_sum_exp_32k,
    matmul_avg_pool_gelu_scale_max_49k,
    matmul_scale_residual_add_clamp_log_sum_exp_mish_24k,
    matmul_sigmoid_sum_36k,
    matmul_sum_max_avg_pool_log_sum_exp_log_sum_exp_23k,
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
        gemm_divide_sum_scaling_21k,
        matmul_sum_max_avg_pool_log_sum_exp_log_sum_exp_23k,
        matmul_scale_residual_add_clamp_log_sum_exp_mish_24k,
        bmm_instance_norm_sum_residual_add_multiply_26k,
        gemm_sigmoid_log_sum_exp_32k,
        matmul_sigmoid_sum_36k,
        gemm_max_subtract_gelu_42k,
        matmul_avg_pool_gelu_scale_max_49k,
    )
}
