// 6p_Paged_Attention: decode attention over a paged KV cache with GQA, Llama-3.1-70B serving
// (MaxText paged_attention_kernel_v2.py).
//
// Operator  for each sequence s (vmap over N): q = queries[cu_q_lens[s]] (one token, H_q heads);
//           k, v = k_pages[page_indices[s]], v_pages[page_indices[s]] reshaped to (S_max, H_kv, D),
//           S_max = pages_per_seq * page_size; each KV head repeated G = H_q / H_kv times;
//           scores = einsum(q, k) * D^-0.5, where(key < kv_lens[s], scores, -1e30);
//           out[s] = softmax(scores over keys) @ v.
// Inputs    queries       bf16 (N, H_q, D)                    normal
//           k_pages       bf16 (N * pages_per_seq, P, H_kv, D) normal (see Deviations)
//           v_pages       bf16 (N * pages_per_seq, P, H_kv, D) normal (see Deviations)
//           kv_lens       i32  (N)                            all S_max
//           page_indices  i32  (N, pages_per_seq)             a shuffled permutation of the pages
//           cu_q_lens     i32  (N + 1)                        arange: one query token per sequence
// Output    out           bf16 (N, H_q, D)
// FLOPs     N * H_q * 4 * S_max * D (the spec's get_flops); 8,589,934,592 at full size (N=64,
//           H_q=64, H_kv=8, D=128, P=16, pages_per_seq=256, S_max=4096).
// Character bandwidth-bound: every K/V byte (1 GiB at full size) is read once for G = 8 query
// heads,
//           8 FLOPs per byte; the gather through a page table is what a kernel must do well.
// Deviations
//   - k_pages and v_pages are N(0, 1), not the spec's N(0, 0.02^2) (its caveat): with q ~ N(0, 1)
//     and k ~ N(0, 0.02^2) the scaled scores have a standard deviation of 0.02, the softmax over
//     4096 keys is uniform to 2%, and each output is the mean of 4096 values (~3e-4), so an
//     all-zero output passes allclose(1e-2). With N(0, 1) keys the scores have unit deviation
//     (attention ignoring q misses the oracle by ~100% relative L2) and with N(0, 1) values the
//     outputs are ~0.03, so the elementwise rule sees them too; 7p, the same serving step, draws
//     its cache N(0, 1).
//   - page_indices is a seed-drawn permutation of all pages at every size, not the spec's identity
//     table: a kernel may not assume a sequence's pages are contiguous in the cache.
//   - kv_lens are all S_max as in the original, so the length mask never bites at these sizes; the
//     kernels still honour kv_lens (a length <= 0 masks every key, and the original's softmax over
//     equal scores is then the mean of all S_max values).
//   - The cpu preset is (N, H_q, H_kv, D, P, pages_per_seq) = (8, 64, 8, 128, 16, 256): the full
//     heads, head_dim, pages and 4096-token context, 8 sequences instead of 64 (134 MB of cache).
//   - The baseline keeps the scores f32 where the original rounds the einsum and the scaled scores
//     to bf16 and runs the softmax in bf16 (the faithful bf16 program does that); its
//     probabilities are bf16 before the value einsum, as the original's are.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "core/bf16.h"
#include "core/tensor.h"
#include "ops/buffers.h"
#include "ops/gemm.h"
#include "ops/paged_kv.h"
#include "ops/rows.h"
#include "ops/spread_calls.h"
#include "ops/tensor_checks.h"
#include "scaffolds.h"
#include "workloads/kit/bf16_softmax.h"
#include "workloads/kit/entry.h"
#include "workloads/kit/presets.h"
#include "workloads/workload.h"
#include "workloads/workloads.h"

namespace kbench {
namespace {

constexpr double kMaskedScore = -1e30;  // the original's where(mask, scores, -1e30)

struct Shape {
  std::int64_t num_seqs, num_q_heads, num_kv_heads, head_dim, page_size, pages_per_seq;
  std::int64_t capacity() const { return page_size * pages_per_seq; }  // S_max
  std::int64_t group() const { return num_q_heads / num_kv_heads; }
  std::int64_t num_pages() const { return num_seqs * pages_per_seq; }
};

constexpr Presets<Shape> kPresets = {
    .smoke = {5, 6, 2, 37, 5, 23},  // odd head_dim and page size, G = 3, 115 keys
    .cpu = {8, 64, 8, 128, 16, 256},
    .full = {64, 64, 8, 128, 16, 256},
};

// One query token per sequence: cu_q_lens = arange(N + 1).
void fill_cu_q_lens(std::uint64_t /*seed*/, std::uint32_t /*stream*/, kb_tensor& t) {
  auto* out = static_cast<std::int32_t*>(t.data);
  for (std::int64_t i = 0; i < t.shape[0]; ++i) out[i] = static_cast<std::int32_t>(i);
}

// A shuffled page table: a permutation of every page in the cache, N rows of pages_per_seq.
void fill_page_indices(std::uint64_t seed, std::uint32_t stream, kb_tensor& t) {
  ops::shuffled_pages(seed, stream, static_cast<std::int32_t*>(t.data), t.shape[0] * t.shape[1]);
}

Problem make_problem(Size size) {
  const Shape s = kPresets.at(size);
  const std::vector<std::int64_t> q_dims = {s.num_seqs, s.num_q_heads, s.head_dim};
  const std::vector<std::int64_t> page_dims = {s.num_pages(), s.page_size, s.num_kv_heads,
                                               s.head_dim};
  Problem problem;
  problem.config = {{"num_seqs", s.num_seqs},           {"max_seq_len", s.capacity()},
                    {"num_query_heads", s.num_q_heads}, {"num_kv_heads", s.num_kv_heads},
                    {"head_dim", s.head_dim},           {"page_size", s.page_size},
                    {"pages_per_seq", s.pages_per_seq}};
  problem.inputs = {
      {{"queries", KB_BF16, q_dims}, InitRule::normal()},
      {{"k_pages", KB_BF16, page_dims}, InitRule::normal()},
      {{"v_pages", KB_BF16, page_dims}, InitRule::normal()},
      {{"kv_lens", KB_I32, {s.num_seqs}}, InitRule::constant(static_cast<double>(s.capacity()))},
      {{"page_indices", KB_I32, {s.num_seqs, s.pages_per_seq}},
       InitRule::structured(fill_page_indices)},
      {{"cu_q_lens", KB_I32, {s.num_seqs + 1}}, InitRule::structured(fill_cu_q_lens)},
  };
  problem.outputs = {{"out", KB_BF16, q_dims}};
  problem.flops = static_cast<double>(s.num_seqs * s.num_q_heads) * 4.0 *
                  static_cast<double>(s.capacity() * s.head_dim);
  problem.min_bytes = tensor_bytes(problem);
  return problem;
}

// The shape of a call whose tensors match the signature above with a page table in range, or
// nullopt.
std::optional<Shape> shape_of_call(const kb_tensor* in, std::int32_t num_inputs,
                                   const kb_tensor* out, std::int32_t num_outputs) {
  if (num_inputs != 6 || num_outputs != 1) return std::nullopt;
  if (in[0].rank != 3 || in[1].rank != 4 || in[4].rank != 2) return std::nullopt;
  const Shape s{in[0].shape[0], in[0].shape[1], in[1].shape[2],
                in[0].shape[2], in[1].shape[1], in[4].shape[1]};
  const std::int64_t num_pages = in[1].shape[0];
  if (s.num_seqs <= 0 || s.num_kv_heads <= 0 || s.head_dim <= 0 || s.page_size <= 0 ||
      s.pages_per_seq <= 0 || s.num_q_heads % s.num_kv_heads != 0)
    return std::nullopt;
  const std::initializer_list<std::int64_t> pages = {num_pages, s.page_size, s.num_kv_heads,
                                                     s.head_dim};
  if (!ops::matches(in[0], KB_BF16, {s.num_seqs, s.num_q_heads, s.head_dim}) ||
      !ops::matches(in[1], KB_BF16, pages) || !ops::matches(in[2], KB_BF16, pages) ||
      !ops::matches(in[3], KB_I32, {s.num_seqs}) ||
      !ops::matches(in[4], KB_I32, {s.num_seqs, s.pages_per_seq}) ||
      !ops::matches(in[5], KB_I32, {s.num_seqs + 1}) ||
      !ops::is_float_output(out[0], {s.num_seqs, s.num_q_heads, s.head_dim}))
    return std::nullopt;
  // The original gathers every page of the table, so every entry must name a page.
  if (!ops::pages_in_range(static_cast<const std::int32_t*>(in[4].data),
                           s.num_seqs * s.pages_per_seq, num_pages))
    return std::nullopt;
  return s;
}

// The query row of sequence s: dynamic_slice clamps its start into the array.
std::int64_t query_row(const kb_tensor* in, const Shape& s, std::int64_t seq) {
  return std::clamp<std::int64_t>(static_cast<const std::int32_t*>(in[5].data)[seq], 0,
                                  s.num_seqs - 1);
}

// Keys of sequence s that pass the length mask; 0 when none does.
std::int64_t visible_keys(const kb_tensor* in, const Shape& s, std::int64_t seq) {
  return std::clamp<std::int64_t>(static_cast<const std::int32_t*>(in[3].data)[seq], 0,
                                  s.capacity());
}

int reference(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const Shape& s = shape;
  const auto* queries = static_cast<const bf16_t*>(in[0].data);
  const auto* k_pages = static_cast<const bf16_t*>(in[1].data);
  const auto* v_pages = static_cast<const bf16_t*>(in[2].data);
  const auto* page_indices = static_cast<const std::int32_t*>(in[4].data);
  auto* o = static_cast<float*>(out[0].data);
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  const std::int64_t capacity = s.capacity();
  // Element (token j, kv head h, dim d) of sequence seq's gathered cache.
  const auto at = [&](const bf16_t* pages, std::int64_t seq, std::int64_t j, std::int64_t h,
                      std::int64_t d) {
    const std::int64_t page = page_indices[seq * s.pages_per_seq + j / s.page_size];
    return static_cast<double>(bf16_to_f32(
        pages[((page * s.page_size + j % s.page_size) * s.num_kv_heads + h) * s.head_dim + d]));
  };
  std::vector<double> scores(static_cast<std::size_t>(capacity));
  std::vector<double> acc(static_cast<std::size_t>(s.head_dim));
  for (std::int64_t seq = 0; seq < s.num_seqs; ++seq) {
    const std::int64_t row = query_row(in, s, seq);
    const std::int64_t visible = visible_keys(in, s, seq);
    for (std::int64_t head = 0; head < s.num_q_heads; ++head) {
      const std::int64_t kv_head = head / s.group();
      const bf16_t* q = queries + (row * s.num_q_heads + head) * s.head_dim;
      double max_score = -INFINITY;
      for (std::int64_t j = 0; j < capacity; ++j) {
        double dot = 0;
        for (std::int64_t d = 0; d < s.head_dim; ++d)
          dot += static_cast<double>(bf16_to_f32(q[d])) * at(k_pages, seq, j, kv_head, d);
        scores[j] = j < visible ? dot * scale : kMaskedScore;
        max_score = std::max(max_score, scores[j]);
      }
      double sum = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t j = 0; j < capacity; ++j) {
        // exp(-1e30 - max) is 0 beside any visible key; with none visible all weights are 1.
        const double weight = std::exp(scores[j] - max_score);
        sum += weight;
        for (std::int64_t d = 0; d < s.head_dim; ++d)
          acc[d] += weight * at(v_pages, seq, j, kv_head, d);
      }
      float* o_row = o + (seq * s.num_q_heads + head) * s.head_dim;
      for (std::int64_t d = 0; d < s.head_dim; ++d) o_row[d] = static_cast<float>(acc[d] / sum);
    }
  }
  return 0;
}

// Tokens per gathered chunk: 256 tokens of K or V at the full heads (H_kv * D = 1024) are 512 KB,
// so a chunk and a KV head's scores stay in a 1.25-2 MB L2 between the gather and the GEMMs that
// read it. A whole number of pages, so chunks start on page boundaries.
std::int64_t chunk_tokens(const Shape& s) {
  return s.page_size * std::max<std::int64_t>(1, 256 / s.page_size);
}

// One thread's buffers for a sequence: its gathered chunk, scores, probabilities and sums.
struct SequenceScratch {
  SequenceScratch(const Shape& s, kb_dtype probability_dtype)
      : block(KB_BF16, chunk_tokens(s), s.num_kv_heads * s.head_dim),
        scores(KB_F32, s.num_q_heads, s.capacity()),
        probabilities(probability_dtype, s.num_q_heads, s.capacity()),
        partial(KB_F32, s.group(), s.head_dim),
        acc(static_cast<std::size_t>(s.num_q_heads * s.head_dim)) {}
  ops::ScratchMatrix block, scores, probabilities, partial;
  std::vector<float> acc;
};

// What a fusing compiler emits for the vmapped program, for one sequence, in two passes over
// the sequence's pages in L2-sized chunks (gathered with one memcpy per page): K chunks feed, per
// KV head, a GEMM of its G query heads (the GQA repeat is never materialized: they are the rows of
// one GEMM) with D^-0.5 fused, into the sequence's f32 scores; one softmax pass per row over the
// keys the mask lets through (all S_max when it lets none through: the mean of all values); then V
// chunks feed the probability x value GEMMs, summed in f32 and rounded once into the output.
// Probabilities are bf16 in the timed run (the original's softmax output is bf16), f32 in the
// oracle. Each K/V byte is read from memory once.
void attend_sequence(const Shape& s, const kb_tensor* in, kb_tensor* out, std::int64_t seq,
                     SequenceScratch& scratch) {
  const std::int64_t token_elems = s.num_kv_heads * s.head_dim;
  const std::int64_t chunk = chunk_tokens(s);
  const std::int64_t g = s.group();
  const kb_dtype probability_dtype = out[0].dtype;
  ops::ScratchMatrix& scores = scratch.scores;
  std::vector<float>& acc = scratch.acc;
  auto* kv = static_cast<bf16_t*>(scratch.block.row(0));
  const auto* queries = static_cast<const bf16_t*>(in[0].data);
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  const ops::PagedCache k_cache{static_cast<const bf16_t*>(in[1].data), s.num_pages(), s.page_size,
                                token_elems};
  const ops::PagedCache v_cache{static_cast<const bf16_t*>(in[2].data), s.num_pages(), s.page_size,
                                token_elems};
  const std::int64_t visible = visible_keys(in, s, seq);
  const std::int64_t keys = visible > 0 ? visible : s.capacity();
  const std::int64_t row = query_row(in, s, seq);
  const std::int32_t* table = static_cast<const std::int32_t*>(in[4].data) + seq * s.pages_per_seq;
  for (std::int64_t c0 = 0; c0 < keys; c0 += chunk) {
    const std::int64_t n = std::min(chunk, keys - c0);
    ops::gather_tokens(k_cache, table + c0 / s.page_size, n, kv);
    for (std::int64_t h = 0; h < s.num_kv_heads; ++h)
      ops::gemm({queries + (row * s.num_q_heads + h * g) * s.head_dim, KB_BF16, g, s.head_dim,
                 s.head_dim},
                {kv + h * s.head_dim, KB_BF16, n, s.head_dim, token_elems}, true,
                {static_cast<float*>(scores.row(h * g)) + c0, KB_F32, g, n, s.capacity()},
                {.alpha = scale});
  }
  const auto width = static_cast<std::size_t>(keys);
  for (std::int64_t r = 0; r < s.num_q_heads; ++r) {
    auto* p = static_cast<float*>(scores.row(r));
    // All `keys` are visible, or none (then keys spans the capacity and the row is uniform).
    if (probability_dtype == KB_BF16)
      ops::prefix_softmax(p, static_cast<std::size_t>(visible), width,
                          static_cast<bf16_t*>(scratch.probabilities.row(r)));
    else
      ops::prefix_softmax(p, static_cast<std::size_t>(visible), width);
  }
  ops::ScratchMatrix& p = probability_dtype == KB_BF16 ? scratch.probabilities : scores;
  const std::size_t p_element = dtype_size(probability_dtype);
  std::fill(acc.begin(), acc.end(), 0.0f);
  for (std::int64_t c0 = 0; c0 < keys; c0 += chunk) {
    const std::int64_t n = std::min(chunk, keys - c0);
    ops::gather_tokens(v_cache, table + c0 / s.page_size, n, kv);
    for (std::int64_t h = 0; h < s.num_kv_heads; ++h) {
      ops::gemm({static_cast<const char*>(p.row(h * g)) + static_cast<std::size_t>(c0) * p_element,
                 probability_dtype, g, n, s.capacity()},
                {kv + h * s.head_dim, KB_BF16, n, s.head_dim, token_elems}, false,
                scratch.partial.out());
      const auto* part = static_cast<const float*>(scratch.partial.row(0));
      float* a = acc.data() + h * g * s.head_dim;
      for (std::int64_t i = 0; i < g * s.head_dim; ++i) a[i] += part[i];
    }
  }
  const std::size_t row_elems = static_cast<std::size_t>(s.num_q_heads * s.head_dim);
  if (out[0].dtype == KB_F32)
    std::memcpy(static_cast<float*>(out[0].data) + seq * s.num_q_heads * s.head_dim, acc.data(),
                row_elems * sizeof(float));
  else
    convert_f32_to_bf16(acc.data(),
                        static_cast<bf16_t*>(out[0].data) + seq * s.num_q_heads * s.head_dim,
                        row_elems);
}

int baseline(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const Shape& s = shape;
  // Decode GEMMs of G rows are far too small to split: the sequences are spread over the threads
  // instead, each with its own buffers, costed by the keys they read.
  std::vector<double> keys_of(static_cast<std::size_t>(s.num_seqs));
  for (std::int64_t seq = 0; seq < s.num_seqs; ++seq) {
    const std::int64_t visible = visible_keys(in, s, seq);
    keys_of[static_cast<std::size_t>(seq)] =
        static_cast<double>(visible > 0 ? visible : s.capacity());
  }
  // Every thread's buffers are made here, not on the threads: a buffer is cached by the thread
  // that frees it, so one made on a pool thread and freed here was page-faulted afresh every call
  // (7p's 8 MB block: the baseline took as long at two threads as at one).
  std::vector<std::optional<SequenceScratch>> scratch(
      static_cast<std::size_t>(omp_get_max_threads()));
  for (std::optional<SequenceScratch>& buffers : scratch) buffers.emplace(s, out[0].dtype);
  ops::spread_library_calls(keys_of, [&](std::size_t seq) {
    attend_sequence(s, in, out, static_cast<std::int64_t>(seq),
                    *scratch[static_cast<std::size_t>(omp_get_thread_num())]);
  });
  return 0;
}

// The original's arithmetic: the score einsum of bf16 operands rounds to bf16, so does its product
// with the (bf16) scale; masked scores are bf16(-1e30); jax.nn.softmax runs in bf16 (x - max, exp
// and the division each round; the sum accumulates in f32, as jnp.sum upcasts bf16, and rounds);
// the value einsum of bf16 probabilities rounds its output to bf16.
int bf16_program(const Shape& shape, const kb_tensor* in, kb_tensor* out) {
  const Shape& s = shape;
  const std::int64_t token_elems = s.num_kv_heads * s.head_dim;
  const std::int64_t capacity = s.capacity();
  ops::ScratchMatrix k_block(KB_BF16, capacity, token_elems);
  ops::ScratchMatrix v_block(KB_BF16, capacity, token_elems);
  ops::ScratchMatrix scores(KB_BF16, s.group(), capacity);
  auto* k = static_cast<bf16_t*>(k_block.row(0));
  auto* v = static_cast<bf16_t*>(v_block.row(0));
  const auto* queries = static_cast<const bf16_t*>(in[0].data);
  auto* o = static_cast<bf16_t*>(out[0].data);
  const float scale = round_to_bf16(static_cast<float>(std::pow(s.head_dim, -0.5)));
  const float masked = round_to_bf16(static_cast<float>(kMaskedScore));
  std::vector<float> row_values(static_cast<std::size_t>(capacity));
  for (std::int64_t seq = 0; seq < s.num_seqs; ++seq) {
    // All S_max keys, as the original gathers them; the mask then hides those past kv_len.
    const std::int32_t* table =
        static_cast<const std::int32_t*>(in[4].data) + seq * s.pages_per_seq;
    ops::gather_tokens(
        {static_cast<const bf16_t*>(in[1].data), s.num_pages(), s.page_size, token_elems}, table,
        capacity, k);
    ops::gather_tokens(
        {static_cast<const bf16_t*>(in[2].data), s.num_pages(), s.page_size, token_elems}, table,
        capacity, v);
    const std::int64_t row = query_row(in, s, seq);
    const std::int64_t visible = visible_keys(in, s, seq);
    for (std::int64_t h = 0; h < s.num_kv_heads; ++h) {
      const std::int64_t first_head = h * s.group();
      ops::gemm({queries + (row * s.num_q_heads + first_head) * s.head_dim, KB_BF16, s.group(),
                 s.head_dim, s.head_dim},
                {k + h * s.head_dim, KB_BF16, capacity, s.head_dim, token_elems}, true,
                scores.out());
      for (std::int64_t r = 0; r < s.group(); ++r) {
        auto* p = static_cast<bf16_t*>(scores.row(r));
        for (std::int64_t j = 0; j < capacity; ++j)
          row_values[j] = j < visible ? round_to_bf16(bf16_to_f32(p[j]) * scale) : masked;
        bf16_softmax(row_values.data(), capacity);
        for (std::int64_t j = 0; j < capacity; ++j) p[j] = f32_to_bf16(row_values[j]);
      }
      ops::gemm(scores.in(), {v + h * s.head_dim, KB_BF16, capacity, s.head_dim, token_elems},
                false,
                {o + (seq * s.num_q_heads + first_head) * s.head_dim, KB_BF16, s.group(),
                 s.head_dim, s.head_dim});
    }
  }
  return 0;
}

// atol = rtol = rel-L2 = 2e-2 instead of JAXBench's 1e-2: the original's bf16 softmax (x - max
// with |x - max| up to ~8 rounds by up to 2^-6, then exp and the division round) gives each
// weight a ~0.5% random error, which the output inherits as a relative error of the same size
// however many keys it averages. Over 20,000 smoke seeds the faithful bf16 program reached rel-L2
// 0.0150 and an element 0.043 off at |oracle| 1.76; 1.5e-2 for both parts failed 2 seeds (1e-2
// elementwise had failed one of 400), at 2e-2 the worst uses 0.78 of the bound (30 cpu seeds:
// 0.36), while the closest degenerate (oracle + 5% noise, rel-L2 0.05) stays 2.5x over.
constexpr Tolerance kTolerance = {.atol = 2e-2, .rtol = 2e-2, .max_rel_l2 = 2e-2};

using Programs = CheckedPrograms<shape_of_call, reference, baseline, bf16_program>;

}  // namespace

const Workload kPagedAttention6p = with_programs<Programs>({
    .name = "6p_Paged_Attention",
    .model = "Llama-3.1-70B decode (MaxText paged_attention_kernel_v2.py)",
    .summary = "GQA decode attention, one query token per sequence, over a shuffled paged KV cache",
    .problem = make_problem,
    .tolerance = kTolerance,
    .scaffold = scaffolds::k6p_Paged_Attention,
});

}  // namespace kbench
