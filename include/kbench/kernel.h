/* The kbench candidate ABI: the one header a candidate kernel compiles against.
 *
 * A candidate is a single C or C++ source file that defines kb_run() with C linkage. kbench
 * compiles it with a fixed command (see docs/candidate-abi.md), loads it into a separate worker
 * process, and calls kb_run() with tensors whose order, names, shapes and dtypes the workload
 * documents
 * (`kbench scaffold ID` prints them).
 *
 * Ownership and layout
 *   - kbench owns every buffer. A candidate never frees, reallocates or keeps a pointer past the
 * call.
 *   - Tensors are dense, contiguous and row-major (last dimension fastest); `data` is 64-byte
 * aligned.
 *   - Inputs are read-only: they are mapped without write permission, so a store to them faults.
 *   - Outputs do not alias inputs or each other. Their prior contents are undefined (kbench fills
 * them with NaN before each call): a candidate must write every element.
 *   - kb_run must be a pure function of its inputs: no state that changes results across calls.
 *     kbench feeds fresh random inputs to every call, timed ones included, and checks every output.
 *
 * Threads
 *   - cfg->num_threads is the number of cores the process is pinned to; using more threads only
 *     time-slices them. OpenMP is available; OMP_NUM_THREADS is already set to num_threads.
 */
#ifndef KBENCH_KERNEL_H_
#define KBENCH_KERNEL_H_

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a type or the kb_run signature changes incompatibly. */
#define KB_ABI_VERSION 1

/* Element types. bf16 is the upper 16 bits of an IEEE-754 binary32, stored as uint16_t. */
typedef enum { KB_BF16 = 0, KB_F32 = 1, KB_I32 = 2 } kb_dtype;

/* A dense tensor: contiguous row-major; data 64-byte aligned. rank 0 is a scalar holding one
 * element; shape[rank..7] are 0 and carry no meaning. */
typedef struct {
  void* data;
  kb_dtype dtype;
  int32_t rank;
  int64_t shape[8];
} kb_tensor;

/* A named scalar parameter of the workload (for example "epsilon"), always passed as a double. */
typedef struct {
  const char* name;
  double value;
} kb_param;

/* Call configuration: thread budget and the workload's scalar parameters. */
typedef struct {
  int32_t num_threads;
  int32_t num_params;
  const kb_param* params;
} kb_config;

/* Implemented by the candidate, C linkage; inputs are read-only; returns 0 on success. A non-zero
 * return is reported as a runtime error. */
int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs, kb_tensor* outputs,
           int32_t num_outputs);

/* ---- Small inline helpers (optional to use) ---- */

/* bf16 -> f32 is exact: the bf16 bits become the high half of the f32. */
static inline float kb_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* f32 -> bf16 with round-to-nearest-even; NaN stays a (quiet) NaN, +-Inf stays +-Inf. */
static inline uint16_t kb_f32_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x0040u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

/* Number of elements of a tensor (1 for a scalar). */
static inline int64_t kb_numel(const kb_tensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; ++i) n *= t->shape[i];
  return n;
}

/* The value of the named parameter, or `fallback` when the workload has none by that name. */
static inline double kb_param_or(const kb_config* cfg, const char* name, double fallback) {
  for (int32_t i = 0; i < cfg->num_params; ++i)
    if (strcmp(cfg->params[i].name, name) == 0) return cfg->params[i].value;
  return fallback;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KBENCH_KERNEL_H_ */
