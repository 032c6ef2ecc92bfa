// What the attention workloads (1p, 2p, 4p, 5p) share: the correctness rule, and the reference,
// baseline and bf16 program that run ops/attention.h on each of a call's heads.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/bf16.h"
#include "core/tensor.h"
#include "kbench/kernel.h"
#include "ops/attention.h"
#include "ops/spread_calls.h"
#include "ops/tensor_checks.h"
#include "workloads/kit/bhsd.h"
#include "workloads/workload.h"

namespace kbench::attention {

// The correctness rule of the attention workloads whose value rows have standard deviation
// `value_scale` (sigma_v):
//   |out - oracle| <= 0.05 * sigma_v + 0.01 * |oracle| per element, rel-L2 <= 0.01.
// An output row is a convex combination of value rows, so sigma_v is the output's natural scale,
// and the bf16 program's elementwise error is an absolute one on that scale: each probability
// carries a relative error of ~2^-8 (bf16 scores, the bf16 scale multiply, and the subtract, exp
// and divide of a bf16 softmax each round to 2^-9), and its product with a value of up to ~4
// sigma_v does not shrink where the output element is small. JAXBench's atol 1e-2 (sigma_v = 1)
// sits inside that error: the faithful bf16 program fails it on ~30% of smoke seeds, worst element
// 1.1-1.9x the bound. Measured over 20 smoke and 3 cpu seeds for 1p, 2p, 4p and 5p, the faithful
// program's worst element is 0.25-0.44 of this bound and its rel-L2 0.0037-0.0062 (5p, with its
// extra bf16 bias add, is the highest). The rel-L2 bound stays JAXBench's 1e-2: it is what rejects
// the suite's closest degenerate output, the oracle plus 5% noise (rel-L2 0.05, 5x the bound),
// whose elements the widened atol admits; zeros, ones, the mean and permuted rows fail both rules.
// constexpr so every Workload using it stays constant-initialized.
constexpr Tolerance tolerance(double value_scale) {
  return {.atol = 0.05 * value_scale, .rtol = 1e-2, .max_rel_l2 = 1e-2};
}

// The head of the call's q, k, v (in[0..2], bf16) and output (out[0]) whose query and output rows
// start `q_offset` elements in, `q_ld` apart, and whose key and value rows start `kv_offset` in,
// `kv_ld` apart. The output shares the query's layout in every attention workload.
inline ops::HeadView head_view(const kb_tensor* in, kb_tensor* out, std::int64_t q_offset,
                               std::int64_t q_ld, std::int64_t kv_offset, std::int64_t kv_ld) {
  const std::size_t out_element = dtype_size(out[0].dtype);
  return {.q = static_cast<const bf16_t*>(in[0].data) + q_offset,
          .q_ld = q_ld,
          .k = static_cast<const bf16_t*>(in[1].data) + kv_offset,
          .k_ld = kv_ld,
          .v = static_cast<const bf16_t*>(in[2].data) + kv_offset,
          .v_ld = kv_ld,
          .out = static_cast<char*>(out[0].data) + static_cast<std::size_t>(q_offset) * out_element,
          .out_dtype = out[0].dtype,
          .out_ld = q_ld};
}

// Head h of batch element b of dense bf16 (B, H, S, D) q, k, v and output: S x D matrices.
inline ops::HeadView bhsd_head(const kb_tensor* in, kb_tensor* out, const bhsd::Shape& s,
                               std::int64_t b, std::int64_t h) {
  const std::int64_t offset = (b * s.num_heads + h) * s.seq_len * s.head_dim;
  return head_view(in, out, offset, s.head_dim, offset, s.head_dim);
}

// Scores scaled by D^-0.5, masked ones set to the original's `masked_score`.
inline ops::ScoreSteps scaled_score_steps(std::int64_t head_dim, double masked_score) {
  return {.scale = 1.0 / std::sqrt(static_cast<double>(head_dim)), .masked_score = masked_score};
}

// Where the head axis of a grouped-query call's 4-d tensors sits: (B, S, H, D) or (B, H, S, D).
enum class GqaLayout { kBshd, kBhsd };

// The extents of a grouped-query call (q bf16 with Hq heads, k and v bf16 with Hkv heads, one float
// output shaped like q) whose S, D and Hkv are positive and whose Hq is a multiple of Hkv, or
// nullopt. `Shape` has batch, seq_len, num_query_heads, num_kv_heads and head_dim, in any order.
template <class Shape>
std::optional<Shape> gqa_shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                       const kb_tensor* out, std::int32_t num_outputs,
                                       GqaLayout layout) {
  if (num_inputs != 3 || num_outputs != 1 || in[0].rank != 4 || in[1].rank != 4)
    return std::nullopt;
  const bool bshd = layout == GqaLayout::kBshd;
  const int seq_axis = bshd ? 1 : 2;
  const int head_axis = bshd ? 2 : 1;
  Shape s{};
  s.batch = in[0].shape[0];
  s.seq_len = in[0].shape[seq_axis];
  s.num_query_heads = in[0].shape[head_axis];
  s.num_kv_heads = in[1].shape[head_axis];
  s.head_dim = in[0].shape[3];
  if (s.seq_len <= 0 || s.head_dim <= 0 || s.num_kv_heads <= 0 ||
      s.num_query_heads % s.num_kv_heads != 0)
    return std::nullopt;
  const auto matches = [&](const kb_tensor& t, std::int64_t heads, bool output) {
    const std::int64_t axis1 = bshd ? s.seq_len : heads;
    const std::int64_t axis2 = bshd ? heads : s.seq_len;
    return output ? ops::is_float_output(t, {s.batch, axis1, axis2, s.head_dim})
                  : ops::matches(t, KB_BF16, {s.batch, axis1, axis2, s.head_dim});
  };
  if (!matches(in[0], s.num_query_heads, false) || !matches(in[1], s.num_kv_heads, false) ||
      !matches(in[2], s.num_kv_heads, false) || !matches(out[0], s.num_query_heads, true))
    return std::nullopt;
  return s;
}

// The heads of a grouped-query call in `kLayout`, for HeadPrograms (the workload adds its
// score_steps). Query heads run in order, so the G query heads of a kv head come in a row and its
// K and V stay in cache across them; query head h reads kv head h / G through a view, as XLA fuses
// the original's repeat of K and V into the dot's operand.
template <class Shape, GqaLayout kLayout>
struct GqaHeads {
  static std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                            const kb_tensor* out, std::int32_t num_outputs) {
    return gqa_shape_of_call<Shape>(in, num_inputs, out, num_outputs, kLayout);
  }

  static std::int64_t heads_per_batch(const Shape& s) { return s.num_query_heads; }

  // BHSD: a head is a dense S x D matrix. BSHD: rows s of query head h of batch b sit at
  // ((b * S + s) * Hq + h) * D, an S x D matrix with row stride Hq * D (Hkv * D for its kv head),
  // and the output head lands back in BSHD by its row stride alone.
  static ops::HeadView head(const kb_tensor* in, kb_tensor* out, const Shape& s, std::int64_t b,
                            std::int64_t h) {
    const std::int64_t kv_head = h / (s.num_query_heads / s.num_kv_heads);
    if constexpr (kLayout == GqaLayout::kBhsd) {
      const std::int64_t head_size = s.seq_len * s.head_dim;
      return head_view(in, out, (b * s.num_query_heads + h) * head_size, s.head_dim,
                       (b * s.num_kv_heads + kv_head) * head_size, s.head_dim);
    } else {
      const std::int64_t q_ld = s.num_query_heads * s.head_dim;
      const std::int64_t kv_ld = s.num_kv_heads * s.head_dim;
      return head_view(in, out, b * s.seq_len * q_ld + h * s.head_dim, q_ld,
                       b * s.seq_len * kv_ld + kv_head * s.head_dim, kv_ld);
    }
  }
};

// The three programs of an attention workload, one ops/attention.h head at a time. `Heads` is the
// workload's own part, static members only:
//   shape_of_call(in, num_inputs, out, num_outputs) -> std::optional<Shape>: the call's extents
//     when its tensors match the workload's signature (any float output dtype), else nullopt;
//     Shape has batch, seq_len and head_dim.
//   heads_per_batch(shape): the query heads of one batch element.
//   head(in, out, shape, b, h) -> ops::HeadView: query head h of batch element b.
//   score_steps(shape) -> ops::ScoreSteps.
// Heads are visited batch-major, h ascending within a batch element: the GQA workloads rely on it
// to keep a kv head's K and V in cache across its consecutive query heads.
template <class Heads>
class HeadPrograms {
 public:
  static int reference(const kb_config*, const kb_tensor* in, std::int32_t num_inputs,
                       kb_tensor* out, std::int32_t num_outputs) {
    return for_each_head(in, num_inputs, out, num_outputs, KB_F32, ops::attention_reference);
  }

  // The heads are split over the threads in contiguous runs, each head's GEMMs on one thread: a
  // head's GEMMs at the cpu size (a few hundred rows) scaled 1.2-1.4x when split two ways.
  static int baseline(const kb_config*, const kb_tensor* in, std::int32_t num_inputs,
                      kb_tensor* out, std::int32_t num_outputs) {
    // A lambda, not the function: its defaulted rows_per_block gives it a 5-parameter type.
    return for_each_head<true>(in, num_inputs, out, num_outputs, std::nullopt,
                               [](const ops::HeadView& head, std::int64_t seq_len,
                                  std::int64_t head_dim, const ops::ScoreSteps& steps) {
                                 ops::attention_baseline(head, seq_len, head_dim, steps);
                               });
  }

  static int bf16_program(const kb_config*, const kb_tensor* in, std::int32_t num_inputs,
                          kb_tensor* out, std::int32_t num_outputs) {
    return for_each_head(in, num_inputs, out, num_outputs, KB_BF16, ops::attention_bf16_program);
  }

 private:
  // `required_out`: ops::attention_reference writes only f32 and ops::attention_bf16_program only
  // bf16; the baseline writes either (Workload::baseline).
  // `kSpread`: contiguous runs of heads (in visiting order) spread over the threads.
  template <bool kSpread = false, class PerHead>
  static int for_each_head(const kb_tensor* in, std::int32_t num_inputs, kb_tensor* out,
                           std::int32_t num_outputs, std::optional<kb_dtype> required_out,
                           PerHead per_head) {
    const auto shape = Heads::shape_of_call(in, num_inputs, out, num_outputs);
    if (!shape || (required_out && out[0].dtype != *required_out)) return 1;
    const ops::ScoreSteps steps = Heads::score_steps(*shape);
    const std::int64_t heads = Heads::heads_per_batch(*shape);
    const std::int64_t total = shape->batch * heads;
    auto run_heads = [&](std::int64_t first, std::int64_t end) {
      for (std::int64_t i = first; i < end; ++i)
        per_head(Heads::head(in, out, *shape, i / heads, i % heads), shape->seq_len,
                 shape->head_dim, steps);
    };
    if (!kSpread) {
      run_heads(0, total);
      return 0;
    }
    ops::spread_contiguous_runs(
        total, [&](std::size_t, std::int64_t first, std::int64_t end) { run_heads(first, end); });
    return 0;
  }
};

}  // namespace kbench::attention
