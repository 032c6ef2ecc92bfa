// 7p_Ragged_Paged_Attention: one mixed prefill + decode serving step of Llama-3.1-70B over a paged
// KV cache (JAX's ref_ragged_paged_attention, scenario of JAXBench PR #66).
//
// Operator  queries is a packed buffer of T tokens; sequence i < num_seqs owns tokens
//           [cu_q_lens[i], cu_q_lens[i+1]) (q_len of them) and kv_lens[i] cached keys, its pages
//           page_indices[i]. k, v = kv_pages[page_indices[i], :, 0::2 / 1::2] reshaped to
//           (S_max, H_kv, D), S_max = pages_per_seq * page_size, each KV head repeated
//           G = H_q / H_kv times; scores = einsum(q, k) in f32 * D^-0.5; query t of the sequence
//           sees key j unless (kv_len - q_len + t < j) | (j >= kv_len), masked scores get
//           -0.7 * float32.max added; p = softmax(scores).astype(bf16); out = einsum(p, v) in bf16,
//           scattered into a zeros (T, H_q, D) buffer at the sequence's tokens.
// Inputs    queries       bf16 (T, H_q, D)                              normal
//           kv_pages      bf16 (max_seqs * pages_per_seq, P, 2 H_kv, D) normal, K/V interleaved
//           kv_lens       i32  (max_seqs)      the scenario's KV lengths, 0 for inactive slots
//           page_indices  i32  (max_seqs, pages_per_seq)  a seed-drawn permutation of all pages
//           cu_q_lens     i32  (max_seqs + 1)  cumulative query lengths, padded with the last
//           num_seqs      i32  (1)             active sequences
// Output    out           bf16 (T, H_q, D); rows of tokens no active sequence owns stay zero
// FLOPs     H_q * 4 * D * sum(q_len * kv_len over active sequences) (the spec's get_flops);
//           366,228,799,488 at full size (T=4096, 64 slots, H_q=64, H_kv=8, D=128, P=16,
//           pages_per_seq=256): 48 one-token decodes with KV lengths 257 + ((i*73) % 240) * 16,
//           seven 512-token prefill chunks with KV lengths 1023 ... 4095 and one 464-token chunk
//           with 4095, 8 inactive slots.
// Essential H_q*4*D*sum(q_len*(kv_len - q_len) + q_len*(q_len + 1)/2), visible pairs only:
//           the roofline's floor
// Character the prefill chunks are compute-bound GEMMs (99% of the FLOPs) with causal masks inside
//           the chunk; the decodes are bandwidth-bound (most of the ~0.5 GB of K/V read); the page
//           table is shuffled, so every page is a separate gather.
// Deviations
//   - None in the operator. The structured inputs are fixed per size (lengths from the scenario);
//     the page permutation is drawn from the seed.
//   - Tokens beyond cu_q_lens[num_seqs] (none at full size: the 56 sequences fill all 4096) keep
//     the zeros of the original's output buffer; the smoke and cpu presets have such padding.
//   - The cpu preset is T=512, 16 slots (14 active: 12 decodes with KV lengths 129 + ((i*73) % 120)
//     * 16, a 256-token chunk at KV length 767 and a 200-token chunk at 2047, the last page of the
//     table), H_q=16, H_kv=2 (G = 8 as in the original), D=128, P=16, pages_per_seq=128: the mix of
//     many short decodes and long masked prefill chunks, 2 inactive slots and 44 padding tokens.
//   - min_bytes counts only the pages below each active kv_len (~48% of kv_pages at full size):
//     the others are never read. The workload is compute-bound either way.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/bf16.h"
#include "core/tensor.h"
#include "ops/attention.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/paged_kv.h"
#include "ops/spread_calls.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/entry.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

// The original's DEFAULT_MASK_VALUE, added to masked scores (exported with the scenario; the
// kernels here mask with -inf, which gives the same softmax whenever a row sees any key).
constexpr double kMaskValue = -0.7 * static_cast<double>(std::numeric_limits<float>::max());

struct Shape {
  std::int64_t max_tokens, max_seqs, num_q_heads, num_kv_heads, head_dim, page_size, pages_per_seq;
  std::int64_t capacity() const { return page_size * pages_per_seq; }  // S_max
  std::int64_t group() const { return num_q_heads / num_kv_heads; }
  std::int64_t num_pages() const { return max_seqs * pages_per_seq; }
  std::int64_t token_elems() const { return 2 * num_kv_heads * head_dim; }
};

// The serving step of one size: shape plus the active sequences' query and KV lengths.
struct Scenario {
  Shape shape;
  std::vector<std::pair<std::int32_t, std::int32_t>> active;  // (q_len, kv_len)
};

Scenario scenario_of(Size size) {
  Scenario s;
  switch (size) {
    case Size::kSmoke:
      // Odd head_dim and page size, G = 3; a one-key decode and a prefill with no cached context.
      s.shape = {61, 7, 6, 2, 37, 5, 11};
      s.active = {{1, 1}, {1, 29}, {1, 54}, {19, 41}, {23, 23}};
      return s;
    case Size::kCpu:
      s.shape = {512, 16, 16, 2, 128, 16, 128};
      for (int i = 0; i < 12; ++i) s.active.push_back({1, 129 + ((i * 73) % 120) * 16});
      s.active.push_back({256, 767});
      s.active.push_back({200, 2047});
      return s;
    case Size::kFull:
      break;
  }
  s.shape = {4096, 64, 64, 8, 128, 16, 256};
  for (int i = 0; i < 48; ++i) s.active.push_back({1, 257 + ((i * 73) % 240) * 16});
  for (const std::int32_t kv_len : {1023, 1535, 2047, 2559, 3071, 3583, 4095})
    s.active.push_back({512, kv_len});
  s.active.push_back({464, 4095});
  return s;
}

// The structured inputs of size `kSize`: functions of (seed, stream) only, as InitRule requires.
template <Size kSize>
void fill_kv_lens(std::uint64_t /*seed*/, std::uint32_t /*stream*/, kb_tensor& t) {
  const Scenario s = scenario_of(kSize);
  auto* out = static_cast<std::int32_t*>(t.data);
  for (std::int64_t i = 0; i < t.shape[0]; ++i)
    out[i] = i < static_cast<std::int64_t>(s.active.size()) ? s.active[i].second : 0;
}

template <Size kSize>
void fill_cu_q_lens(std::uint64_t /*seed*/, std::uint32_t /*stream*/, kb_tensor& t) {
  const Scenario s = scenario_of(kSize);
  auto* out = static_cast<std::int32_t*>(t.data);
  std::int32_t total = 0;
  out[0] = 0;
  for (std::int64_t i = 1; i < t.shape[0]; ++i) {
    if (i <= static_cast<std::int64_t>(s.active.size())) total += s.active[i - 1].first;
    out[i] = total;
  }
}

template <Size kSize>
void fill_num_seqs(std::uint64_t /*seed*/, std::uint32_t /*stream*/, kb_tensor& t) {
  *static_cast<std::int32_t*>(t.data) = static_cast<std::int32_t>(scenario_of(kSize).active.size());
}

void fill_page_indices(std::uint64_t seed, std::uint32_t stream, kb_tensor& t) {
  ops::shuffled_pages(seed, stream, static_cast<std::int32_t*>(t.data), t.shape[0] * t.shape[1]);
}

template <Size kSize>
Problem make_problem_of() {
  const Scenario scenario = scenario_of(kSize);
  const Shape& s = scenario.shape;
  const std::vector<std::int64_t> q_dims = {s.max_tokens, s.num_q_heads, s.head_dim};
  Problem problem;
  problem.config = {{"max_num_batched_tokens", s.max_tokens},
                    {"max_num_seqs", s.max_seqs},
                    {"num_q_heads", s.num_q_heads},
                    {"num_kv_heads", s.num_kv_heads},
                    {"head_dim", s.head_dim},
                    {"page_size", s.page_size},
                    {"pages_per_seq", s.pages_per_seq}};
  // The original loops over its module-level ACTIVE_Q_LENS as static per-sequence capacities: the
  // scenario is part of its configuration.
  std::vector<std::int64_t> q_lens, kv_lens;
  for (const auto& [q_len, kv_len] : scenario.active) {
    q_lens.push_back(q_len);
    kv_lens.push_back(kv_len);
  }
  problem.scenario = {{"ACTIVE_Q_LENS", std::move(q_lens)},
                      {"ACTIVE_KV_LENS", std::move(kv_lens)},
                      {"DEFAULT_MASK_VALUE", kMaskValue}};
  problem.inputs = {
      {{"queries", KB_BF16, q_dims}, InitRule::normal()},
      {{"kv_pages", KB_BF16, {s.num_pages(), s.page_size, 2 * s.num_kv_heads, s.head_dim}},
       InitRule::normal()},
      {{"kv_lens", KB_I32, {s.max_seqs}}, InitRule::structured(fill_kv_lens<kSize>)},
      {{"page_indices", KB_I32, {s.max_seqs, s.pages_per_seq}},
       InitRule::structured(fill_page_indices)},
      {{"cu_q_lens", KB_I32, {s.max_seqs + 1}}, InitRule::structured(fill_cu_q_lens<kSize>)},
      {{"num_seqs", KB_I32, {1}}, InitRule::structured(fill_num_seqs<kSize>)},
  };
  problem.outputs = {{"out", KB_BF16, q_dims}};
  double q_kv = 0, visible = 0;
  for (const auto& [q_len, kv_len] : scenario.active) {
    q_kv += static_cast<double>(q_len) * static_cast<double>(kv_len);
    visible += ops::causal_pairs(q_len, kv_len);
  }
  const double per_pair =
      static_cast<double>(s.num_q_heads) * 4.0 * static_cast<double>(s.head_dim);
  problem.flops = per_pair * q_kv;
  problem.essential_flops = per_pair * visible;
  // A kernel reads only the pages that hold an active sequence's keys and values.
  double unread_pages = static_cast<double>(s.num_pages());
  for (const auto& active : scenario.active)
    unread_pages -= static_cast<double>((active.second + s.page_size - 1) / s.page_size);
  const double page_bytes =
      static_cast<double>(s.page_size * s.token_elems()) * static_cast<double>(sizeof(bf16_t));
  problem.min_bytes = tensor_bytes(problem) - unread_pages * page_bytes;
  return problem;
}

Problem make_problem(Size size) {
  switch (size) {
    case Size::kSmoke:
      return make_problem_of<Size::kSmoke>();
    case Size::kCpu:
      return make_problem_of<Size::kCpu>();
    case Size::kFull:
      break;
  }
  return make_problem_of<Size::kFull>();
}

// A checked call: its shape, and the active sequences as the int32 inputs describe them.
struct Call {
  Shape shape;
  std::int64_t num_seqs = 0;
  const std::int32_t* kv_lens = nullptr;
  const std::int32_t* page_indices = nullptr;
  const std::int32_t* cu_q_lens = nullptr;
};

// The call when its tensors match the signature above and the ragged layout is well formed
// (num_seqs within the slots, token ranges ordered inside the buffer, the page table in range),
// or nullopt.
std::optional<Call> call_of(const kb_tensor* in, std::int32_t num_inputs, const kb_tensor* out,
                            std::int32_t num_outputs) {
  if (num_inputs != 6 || num_outputs != 1) return std::nullopt;
  if (in[0].rank != 3 || in[1].rank != 4 || in[3].rank != 2 || in[1].shape[2] % 2 != 0)
    return std::nullopt;
  const Shape s{in[0].shape[0], in[3].shape[0], in[0].shape[1], in[1].shape[2] / 2,
                in[0].shape[2], in[1].shape[1], in[3].shape[1]};
  const std::int64_t num_pages = in[1].shape[0];
  if (s.max_seqs <= 0 || s.num_kv_heads <= 0 || s.head_dim <= 0 || s.page_size <= 0 ||
      s.pages_per_seq <= 0 || s.num_q_heads % s.num_kv_heads != 0)
    return std::nullopt;
  if (!ops::matches(in[0], KB_BF16, {s.max_tokens, s.num_q_heads, s.head_dim}) ||
      !ops::matches(in[1], KB_BF16, {num_pages, s.page_size, 2 * s.num_kv_heads, s.head_dim}) ||
      !ops::matches(in[2], KB_I32, {s.max_seqs}) ||
      !ops::matches(in[3], KB_I32, {s.max_seqs, s.pages_per_seq}) ||
      !ops::matches(in[4], KB_I32, {s.max_seqs + 1}) || !ops::matches(in[5], KB_I32, {1}) ||
      !ops::is_float_output(out[0], {s.max_tokens, s.num_q_heads, s.head_dim}))
    return std::nullopt;
  Call call{s, *static_cast<const std::int32_t*>(in[5].data),
            static_cast<const std::int32_t*>(in[2].data),
            static_cast<const std::int32_t*>(in[3].data),
            static_cast<const std::int32_t*>(in[4].data)};
  if (call.num_seqs < 0 || call.num_seqs > s.max_seqs || call.cu_q_lens[0] < 0 ||
      call.cu_q_lens[call.num_seqs] > s.max_tokens)
    return std::nullopt;
  for (std::int64_t i = 0; i < call.num_seqs; ++i)
    if (call.cu_q_lens[i + 1] < call.cu_q_lens[i]) return std::nullopt;
  // The original gathers every page of an active sequence's row.
  if (!ops::pages_in_range(call.page_indices, call.num_seqs * s.pages_per_seq, num_pages))
    return std::nullopt;
  return call;
}

// Query t (0-based within its sequence) sees keys [0, kv_len - q_len + 1 + t) of the S_max gathered
// ones: the original's mask (q_span < kv_span) | (kv_span >= kv_len), as t < q_len. When it sees
// none, every score carries the same mask value and the softmax averages all S_max keys.
ops::Visibility visibility_of(std::int64_t q_len, std::int64_t kv_len, bool per_token) {
  return {kv_len - q_len + 1, per_token ? 1 : 0};
}

// Zeroes the output rows of tokens no active sequence owns: [0, cu[0]) and [cu[num_seqs], T).
void zero_unowned_rows(const Call& call, kb_tensor& out) {
  const std::size_t row_bytes =
      static_cast<std::size_t>(call.shape.num_q_heads * call.shape.head_dim) *
      dtype_size(out.dtype);
  auto* base = static_cast<char*>(out.data);
  const auto first = static_cast<std::size_t>(call.cu_q_lens[0]);
  const auto last = static_cast<std::size_t>(call.cu_q_lens[call.num_seqs]);
  std::memset(base, 0, first * row_bytes);
  std::memset(base + last * row_bytes, 0,
              (static_cast<std::size_t>(call.shape.max_tokens) - last) * row_bytes);
}

int reference(const Call& call, const kb_tensor* in, kb_tensor* out) {
  const Shape& s = call.shape;
  const auto* queries = static_cast<const bf16_t*>(in[0].data);
  const auto* kv_pages = static_cast<const bf16_t*>(in[1].data);
  auto* o = static_cast<float*>(out[0].data);
  std::fill(o, o + s.max_tokens * s.num_q_heads * s.head_dim, 0.0f);
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  const std::int64_t capacity = s.capacity();
  std::vector<double> scores(static_cast<std::size_t>(capacity));
  std::vector<double> acc(static_cast<std::size_t>(s.head_dim));
  for (std::int64_t i = 0; i < call.num_seqs; ++i) {
    const std::int64_t q_start = call.cu_q_lens[i];
    const std::int64_t q_len = call.cu_q_lens[i + 1] - q_start;
    const std::int64_t kv_len = call.kv_lens[i];
    // Element d of combined head c (K of KV head h is 2h, its V 2h + 1) of gathered token j.
    const auto at = [&](std::int64_t j, std::int64_t c, std::int64_t d) {
      const std::int64_t page = call.page_indices[i * s.pages_per_seq + j / s.page_size];
      return static_cast<double>(bf16_to_f32(
          kv_pages[((page * s.page_size + j % s.page_size) * 2 * s.num_kv_heads + c) * s.head_dim +
                   d]));
    };
    for (std::int64_t t = 0; t < q_len; ++t) {
      for (std::int64_t head = 0; head < s.num_q_heads; ++head) {
        const std::int64_t kv_head = head / s.group();
        const bf16_t* q = queries + ((q_start + t) * s.num_q_heads + head) * s.head_dim;
        bool any_visible = false;
        double max_score = -INFINITY;
        for (std::int64_t j = 0; j < capacity; ++j) {
          const bool masked = (kv_len - q_len + t < j) || (j >= kv_len);
          double dot = 0;
          for (std::int64_t d = 0; d < s.head_dim; ++d)
            dot += static_cast<double>(bf16_to_f32(q[d])) * at(j, 2 * kv_head, d);
          scores[j] = dot * scale;
          if (!masked) max_score = std::max(max_score, scores[j]);
          any_visible |= !masked;
          if (masked) scores[j] = -INFINITY;
        }
        double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::int64_t j = 0; j < capacity; ++j) {
          // With no key visible the f32 scores all equal the mask value: uniform weights.
          const double weight = any_visible ? std::exp(scores[j] - max_score) : 1.0;
          if (weight == 0) continue;
          sum += weight;
          for (std::int64_t d = 0; d < s.head_dim; ++d)
            acc[d] += weight * at(j, 2 * kv_head + 1, d);
        }
        float* o_row = o + ((q_start + t) * s.num_q_heads + head) * s.head_dim;
        for (std::int64_t d = 0; d < s.head_dim; ++d) o_row[d] = static_cast<float>(acc[d] / sum);
      }
    }
  }
  return 0;
}

// What a fusing compiler emits, per active sequence and KV head: that head's keys and values
// gathered from the pages (one copy per token each) into two dense (keys, D) blocks, a GEMM for the
// scores with D^-0.5 fused (f32, as preferred_element_type=f32 makes them), a masked softmax pass
// per row and a GEMM with the values. A decode's G query heads of the KV head are the rows of one
// GEMM, read and written in place; a prefill chunk runs one GEMM per query head over its q_len
// tokens, on dense copies of its query and output rows. Only the keys below kv_len are gathered
// (all S_max when some row sees none). Probabilities are bf16 in the timed run (the original's
// .astype(bf16)), f32 in the oracle; rows of unowned tokens are zeroed. Dense operands, because
// oneDNN's bf16 matmul is slower on strided ones: on the AMX Xeon the baseline took 26.1 ms with
// keys and values interleaved (rows 2 D apart) and the prefill rows in place (H_q D apart), 19.0
// ms with both dense, and 26.6-28.0 ms with only the query and output rows dense.
// KV head h of sequence i of the call, its keys and values gathered into `kv` (2 capacity D).
void attend_head(const Call& call, const kb_tensor* in, kb_tensor* out, kb_dtype probability_dtype,
                 std::int64_t i, std::int64_t h, bf16_t* kv) {
  const Shape& s = call.shape;
  const auto* queries = static_cast<const bf16_t*>(in[0].data);
  const std::size_t out_element = dtype_size(out[0].dtype);
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  const ops::PagedCache cache{static_cast<const bf16_t*>(in[1].data), in[1].shape[0], s.page_size,
                              s.token_elems()};
  const std::int64_t q_start = call.cu_q_lens[i];
  const std::int64_t q_len = call.cu_q_lens[i + 1] - q_start;
  const std::int64_t kv_len = call.kv_lens[i];
  const bool per_token = q_len > 1;
  const ops::Visibility visibility = visibility_of(q_len, kv_len, per_token);
  // The first row sees the fewest keys; if it sees none, the uniform average needs all S_max.
  const std::int64_t keys =
      visibility.keys(0, s.capacity()) == 0 ? s.capacity() : std::min(kv_len, s.capacity());
  // Two gathers, the keys' and the values': the second re-reads lines the first left in cache.
  const std::int32_t* pages = call.page_indices + i * s.pages_per_seq;
  bf16_t* k = kv;
  bf16_t* v = kv + s.capacity() * s.head_dim;
  ops::gather_token_slice(cache, pages, keys, h * 2 * s.head_dim, s.head_dim, k);
  ops::gather_token_slice(cache, pages, keys, h * 2 * s.head_dim + s.head_dim, s.head_dim, v);
  const std::int64_t kv_ld = s.head_dim;
  // (rows, first query head, query row stride) of each GEMM of this KV head.
  const std::int64_t row_ld = per_token ? s.num_q_heads * s.head_dim : s.head_dim;
  const std::int64_t rows = per_token ? q_len : s.group();
  const std::size_t row_bytes = static_cast<std::size_t>(s.head_dim) * out_element;
  for (std::int64_t g = 0; g < (per_token ? s.group() : 1); ++g) {
    const std::int64_t offset = (q_start * s.num_q_heads + h * s.group() + g) * s.head_dim;
    const bf16_t* q = queries + offset;
    char* o = static_cast<char*>(out[0].data) + static_cast<std::size_t>(offset) * out_element;
    if (row_ld == s.head_dim) {
      ops::attend({q, KB_BF16, rows, s.head_dim, row_ld}, k, v, kv_ld, keys, visibility, scale,
                  probability_dtype, {o, out[0].dtype, rows, s.head_dim, row_ld});
      continue;
    }
    // A prefill head's query and output rows lie num_q_heads * D apart: copied to and from dense
    // blocks (see above).
    ops::ScratchMatrix q_dense(KB_BF16, rows, s.head_dim), o_dense(out[0].dtype, rows, s.head_dim);
    for (std::int64_t r = 0; r < rows; ++r)
      std::memcpy(q_dense.row(r), q + r * row_ld,
                  static_cast<std::size_t>(s.head_dim) * sizeof(bf16_t));
    ops::attend(q_dense.in(), k, v, kv_ld, keys, visibility, scale, probability_dtype,
                o_dense.out());
    for (std::int64_t r = 0; r < rows; ++r)
      std::memcpy(o + static_cast<std::size_t>(r * row_ld) * out_element, o_dense.row(r),
                  row_bytes);
  }
}

// The (sequence, KV head) pairs are independent and their GEMMs small (a decode's are G rows):
// they are spread over the threads, one each, costed by query rows times keys. Whole sequences
// would cap the scaling: the longest prefill chunk is two thirds of the work at cpu size.
int run(const Call& call, const kb_tensor* in, kb_tensor* out, kb_dtype probability_dtype) {
  const Shape& s = call.shape;
  zero_unowned_rows(call, out[0]);
  std::vector<std::pair<std::int64_t, std::int64_t>> units;  // (sequence, KV head)
  std::vector<double> cost;
  for (std::int64_t i = 0; i < call.num_seqs; ++i) {
    const std::int64_t q_len = call.cu_q_lens[i + 1] - call.cu_q_lens[i];
    if (q_len == 0) continue;
    for (std::int64_t h = 0; h < s.num_kv_heads; ++h) {
      units.emplace_back(i, h);
      cost.push_back(static_cast<double>(q_len) *
                     static_cast<double>(std::max<std::int64_t>(
                         1, std::min<std::int64_t>(call.kv_lens[i], s.capacity()))));
    }
  }
  // Made here, not on the threads: see paged_attention_6p.cc (a buffer freed by another thread
  // than the one that made it is page-faulted afresh on every call).
  std::vector<std::optional<ops::ScratchMatrix>> blocks(
      static_cast<std::size_t>(omp_get_max_threads()));
  for (std::optional<ops::ScratchMatrix>& block : blocks)
    block.emplace(KB_BF16, s.capacity(), 2 * s.head_dim);
  ops::spread_library_calls(cost, [&](std::size_t u) {
    ops::ScratchMatrix& block = *blocks[static_cast<std::size_t>(omp_get_thread_num())];
    attend_head(call, in, out, probability_dtype, units[u].first, units[u].second,
                static_cast<bf16_t*>(block.row(0)));
  });
  return 0;
}

int baseline(const Call& call, const kb_tensor* in, kb_tensor* out) {
  return run(call, in, out, out[0].dtype);
}

// The original rounds exactly where the timed baseline does: f32 scores and softmax
// (preferred_element_type=f32), bf16 probabilities (.astype(v.dtype)), a bf16 value einsum; the
// zeros buffer and the scatter are exact. So its emulation is the baseline's bf16 run.
int bf16_program(const Call& call, const kb_tensor* in, kb_tensor* out) {
  return run(call, in, out, KB_BF16);
}

using Programs = CheckedPrograms<call_of, reference, baseline, bf16_program>;

}  // namespace

const Workload kRaggedPagedAttention7p = with_programs<Programs>({
    .name = "7p_Ragged_Paged_Attention",
    .model = "Llama-3.1-70B mixed prefill+decode serving step",
    .summary =
        "Ragged GQA attention of a packed decode + prefill token buffer over a paged KV cache",
    .problem = make_problem,
    .scaffold = scaffolds::k7p_Ragged_Paged_Attention,
});

}  // namespace kbench
