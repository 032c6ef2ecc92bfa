// Tests of the causal attention block (ops/attention.h) at edge shapes, and of the
// attention workloads built on it (1p, 2p, 4p, 5p): their spec entries, and the shortcuts their
// non-degeneracy changes exist to reject (uniform attention, a dropped bias).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/bf16.h"
#include "core/input_gen.h"
#include "core/tensor.h"
#include "harness/checker.h"
#include "harness/problem_instance.h"
#include "ops/attention.h"
#include "workloads/kit/attention.h"
#include "workloads/registry.h"

namespace kbench {
namespace {

// Strided operands of one head: k, v unit normal, q unit normal or, where the program has no scale
// op, pre-scaled by D^-0.5 as 4p draws it, so the scores have unit spread either way; the bias
// normal*0.5 as 5p draws it. (A wider score spread takes the bf16 program's softmax past the
// attention rule: unit-spread bias on unit-spread scores measured 1.8x.)
struct HeadData {
  std::int64_t seq_len, head_dim, q_ld, kv_ld, out_ld;
  std::vector<bf16_t> q, k, v, bias;

  HeadData(std::int64_t s, std::int64_t d, bool with_bias, std::uint64_t seed,
           bool prescaled = false)
      : seq_len(s), head_dim(d), q_ld(d + 3), kv_ld(2 * d), out_ld(d + 5) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto fill = [&](std::vector<bf16_t>& t, std::size_t n) {
      t.resize(n);
      for (bf16_t& x : t) x = f32_to_bf16(normal(rng));
    };
    fill(q, static_cast<std::size_t>(s * q_ld));
    if (prescaled)
      for (bf16_t& x : q) x = f32_to_bf16(bf16_to_f32(x) / std::sqrt(static_cast<float>(d)));
    fill(k, static_cast<std::size_t>(s * kv_ld));
    fill(v, static_cast<std::size_t>(s * kv_ld));
    if (with_bias) {
      fill(bias, static_cast<std::size_t>(s * s));
      for (bf16_t& x : bias) x = f32_to_bf16(0.5f * bf16_to_f32(x));
    }
  }

  ops::HeadView view(void* out, kb_dtype out_dtype) const {
    return {.q = q.data(),
            .q_ld = q_ld,
            .k = k.data(),
            .k_ld = kv_ld,
            .v = v.data(),
            .v_ld = kv_ld,
            .bias = bias.empty() ? nullptr : bias.data(),
            .out = out,
            .out_dtype = out_dtype,
            .out_ld = out_ld};
  }
  std::size_t out_size() const { return static_cast<std::size_t>(seq_len * out_ld); }
};

ops::ScoreSteps steps_for(std::int64_t head_dim, bool scaled) {
  if (!scaled) return {.scale = std::nullopt, .masked_score = -1e30};
  return {.scale = 1.0 / std::sqrt(static_cast<double>(head_dim)), .masked_score = -1e9};
}

std::vector<float> reference_of(const HeadData& h, const ops::ScoreSteps& steps) {
  std::vector<float> out(h.out_size(), 0.0f);
  ops::attention_reference(h.view(out.data(), KB_F32), h.seq_len, h.head_dim, steps);
  return out;
}

std::vector<float> baseline_f32(const HeadData& h, const ops::ScoreSteps& steps,
                                std::int64_t rows_per_block) {
  std::vector<float> out(h.out_size(), NAN);
  ops::attention_baseline(h.view(out.data(), KB_F32), h.seq_len, h.head_dim, steps, rows_per_block);
  return out;
}

std::vector<float> widened(const std::vector<bf16_t>& x) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = bf16_to_f32(x[i]);
  return out;
}

std::vector<float> baseline_bf16(const HeadData& h, const ops::ScoreSteps& steps) {
  std::vector<bf16_t> out(h.out_size(), f32_to_bf16(NAN));
  ops::attention_baseline(h.view(out.data(), KB_BF16), h.seq_len, h.head_dim, steps);
  return widened(out);
}

std::vector<float> program_bf16(const HeadData& h, const ops::ScoreSteps& steps) {
  std::vector<bf16_t> out(h.out_size(), f32_to_bf16(NAN));
  ops::attention_bf16_program(h.view(out.data(), KB_BF16), h.seq_len, h.head_dim, steps);
  return widened(out);
}

// The worst |out - truth| / (atol + rtol |truth|) over the head's S x D elements (the padding
// between output rows is never written and not compared).
double worst_ratio(const HeadData& h, const std::vector<float>& out,
                   const std::vector<float>& truth, double atol, double rtol) {
  double worst = 0;
  for (std::int64_t i = 0; i < h.seq_len; ++i)
    for (std::int64_t d = 0; d < h.head_dim; ++d) {
      const std::size_t at = static_cast<std::size_t>(i * h.out_ld + d);
      const double err = std::abs(static_cast<double>(out[at]) - truth[at]);
      worst =
          std::max(worst, std::isnan(err) ? INFINITY : err / (atol + rtol * std::abs(truth[at])));
    }
  return worst;
}

// Lengths around the vector widths and the 64-row block minimum, and primes; head dims 1, 16, 37.
constexpr std::int64_t kSeqLens[] = {1, 2, 15, 16, 17, 63, 64, 65, 131};
constexpr std::int64_t kHeadDims[] = {1, 16, 37};

TEST(AttentionOps, BaselineMatchesReferenceAtEdgeShapes) {
  for (std::int64_t s : kSeqLens)
    for (std::int64_t d : kHeadDims)
      for (bool with_bias : {false, true})
        for (bool scaled : {false, true}) {
          SCOPED_TRACE("S=" + std::to_string(s) + " D=" + std::to_string(d) +
                       (with_bias ? " bias" : "") + (scaled ? " scaled" : ""));
          const HeadData h(s, d, with_bias, static_cast<std::uint64_t>(s * 131 + d), !scaled);
          const ops::ScoreSteps steps = steps_for(d, scaled);
          const std::vector<float> truth = reference_of(h, steps);
          // The f32 oracle: f32 GEMMs and softmax against double, on unit-scale values.
          for (std::int64_t rows :
               {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{64}}) {
            EXPECT_LT(worst_ratio(h, baseline_f32(h, steps, rows), truth, 1e-4, 1e-4), 1.0)
                << "rows per block " << rows;
          }
          // bf16 probabilities and output: within a quarter of the attention rule.
          const Tolerance tol = attention::tolerance(1.0);
          EXPECT_LT(worst_ratio(h, baseline_bf16(h, steps), truth, tol.atol, tol.rtol), 0.25);
          EXPECT_LT(worst_ratio(h, program_bf16(h, steps), truth, tol.atol, tol.rtol), 1.0);
        }
}

TEST(AttentionOps, KeysAfterARowNeverReachIt) {
  // Changing keys and values j >= S/2 leaves rows i < S/2 bit for bit: masked weights are exact
  // zeros in the baseline (both dtypes) and the bf16 program.
  for (bool with_bias : {false, true}) {
    HeadData h(67, 37, with_bias, 5);
    const ops::ScoreSteps steps = steps_for(37, true);
    const std::vector<float> before[] = {baseline_f32(h, steps, 0), baseline_bf16(h, steps),
                                         program_bf16(h, steps)};
    for (std::int64_t j = h.seq_len / 2; j < h.seq_len; ++j)
      for (std::int64_t d = 0; d < h.head_dim; ++d) {
        h.k[static_cast<std::size_t>(j * h.kv_ld + d)] = f32_to_bf16(100.0f);
        h.v[static_cast<std::size_t>(j * h.kv_ld + d)] = f32_to_bf16(-50.0f);
      }
    const std::vector<float> after[] = {baseline_f32(h, steps, 0), baseline_bf16(h, steps),
                                        program_bf16(h, steps)};
    for (int variant = 0; variant < 3; ++variant)
      for (std::int64_t i = 0; i < h.seq_len / 2; ++i)
        for (std::int64_t d = 0; d < h.head_dim; ++d) {
          const std::size_t at = static_cast<std::size_t>(i * h.out_ld + d);
          ASSERT_EQ(before[variant][at], after[variant][at])
              << "variant " << variant << " row " << i << " col " << d;
        }
  }
}

TEST(AttentionOps, FirstRowIsTheFirstValue) {
  // Row 0 sees one key: its probability is exactly 1 in every implementation.
  const HeadData h(33, 16, true, 9);
  const ops::ScoreSteps steps = steps_for(16, true);
  for (const std::vector<float>& out :
       {baseline_f32(h, steps, 0), baseline_bf16(h, steps), program_bf16(h, steps)})
    for (std::int64_t d = 0; d < h.head_dim; ++d)
      EXPECT_EQ(out[static_cast<std::size_t>(d)], bf16_to_f32(h.v[static_cast<std::size_t>(d)]));
}

TEST(AttentionOps, ProgramRoundsTheProbabilitiesToBf16) {
  // With q = 0 every score is 0: the program's probabilities are bf16(1 / (i + 1)) (exp(0) = 1 and
  // the sum i + 1 are exact in bf16 up to 256), so row i is bf16(sum_j bf16(1/(i+1)) v_j) up to
  // the f32 accumulation; the oracle's exact 1/(i+1) differs from it by up to 2^-9 relative.
  HeadData h(41, 16, false, 13);
  std::fill(h.q.begin(), h.q.end(), f32_to_bf16(0.0f));
  const ops::ScoreSteps steps = steps_for(16, true);
  const std::vector<float> out = program_bf16(h, steps);
  for (std::int64_t i = 0; i < h.seq_len; ++i) {
    const double p = round_to_bf16(1.0f / static_cast<float>(i + 1));
    for (std::int64_t d = 0; d < h.head_dim; ++d) {
      double expect = 0;
      for (std::int64_t j = 0; j <= i; ++j)
        expect += p * bf16_to_f32(h.v[static_cast<std::size_t>(j * h.kv_ld + d)]);
      const float got = out[static_cast<std::size_t>(i * h.out_ld + d)];
      // One bf16 step of the result, plus f32 accumulation slack.
      EXPECT_NEAR(got, expect, std::abs(expect) * 0x1p-8 + 1e-5) << "row " << i << " col " << d;
    }
  }
}

TEST(AttentionOps, DefaultBlocksHoldAboutOneMebibyteOfScores) {
  EXPECT_EQ(ops::attention_rows_per_block(1024), 256);
  EXPECT_EQ(ops::attention_rows_per_block(4096), 64);
  EXPECT_EQ(ops::attention_rows_per_block(100000), 64);  // never below a GEMM panel
  EXPECT_EQ(ops::attention_rows_per_block(61), 61);      // never beyond the head
  EXPECT_EQ(ops::attention_rows_per_block(1), 1);
}

// ---- The attention workloads ----

std::filesystem::path spec_path() {
  return std::filesystem::path(KBENCH_SOURCE_DIR) / ".." / "shared" / "spec" / "workloads.json";
}

std::vector<std::int64_t> spec_shape(const std::string& text) {
  std::vector<std::int64_t> extents;
  const std::string inside = text.substr(0, text.find(')'));
  const std::regex number("[0-9]+");
  for (auto it = std::sregex_iterator(inside.begin(), inside.end(), number);
       it != std::sregex_iterator(); ++it)
    extents.push_back(std::stoll(it->str()));
  return extents;
}

TEST(AttentionWorkloads, MatchTheirSpecEntries) {
  std::ifstream file(spec_path());
  if (!file) GTEST_SKIP() << "no spec at " << spec_path();
  const auto spec = nlohmann::json::parse(file);
  for (const char* id : {"1p", "2p", "4p", "5p"}) {
    SCOPED_TRACE(id);
    const Workload* w = find_workload(id);
    ASSERT_NE(w, nullptr);
    const auto entry =
        std::find_if(spec.begin(), spec.end(), [&](const auto& s) { return s["id"] == id; });
    ASSERT_NE(entry, spec.end());
    EXPECT_EQ(w->name, (*entry)["name"].get<std::string>());
    EXPECT_EQ(w->source_model(), (*entry)["source_model"].get<std::string>());
    const Problem full = w->problem(Size::kFull);
    EXPECT_EQ(full.flops, (*entry)["flops_full"].get<double>());
    ASSERT_EQ(full.inputs.size(), (*entry)["inputs_full"].size());
    for (std::size_t i = 0; i < full.inputs.size(); ++i) {
      EXPECT_EQ(full.inputs[i].tensor.name, (*entry)["inputs_full"][i]["name"].get<std::string>());
      EXPECT_EQ(full.inputs[i].tensor.shape,
                spec_shape((*entry)["inputs_full"][i]["shape"].get<std::string>()));
    }
    EXPECT_EQ(full.outputs.at(0).shape,
              spec_shape((*entry)["output_shape_full"].get<std::string>()));
  }
}

// A smoke-size call of `w` with its inputs drawn from seed 1 and f32 outputs.
struct OwnedCall {
  std::vector<HostTensor> tensors;
  std::vector<kb_tensor> in, out;

  explicit OwnedCall(const Workload& w, kb_dtype out_dtype = KB_F32) {
    const Problem problem = w.problem(Size::kSmoke);
    for (std::size_t i = 0; i < problem.inputs.size(); ++i) {
      tensors.emplace_back(problem.inputs[i].tensor);
      in.push_back(tensors.back().view());
      fill_input(problem.inputs[i].init, 1, static_cast<std::uint32_t>(i), in.back());
    }
    TensorSpec spec = problem.outputs[0];
    spec.dtype = out_dtype;
    tensors.emplace_back(spec);
    out.push_back(tensors.back().view());
  }
  int run(KernelFn kernel, const std::vector<kb_tensor>& inputs, std::int32_t num_outputs = 1) {
    const kb_config config{1, 0, nullptr};
    return kernel(&config, inputs.data(), static_cast<std::int32_t>(inputs.size()), out.data(),
                  num_outputs);
  }
};

TEST(AttentionWorkloads, KernelsRejectAMismatchedCall) {
  for (const char* id : {"1p", "2p", "4p", "5p"}) {
    SCOPED_TRACE(id);
    const Workload& w = *find_workload(id);
    OwnedCall call(w);
    ASSERT_EQ(call.run(w.reference, call.in), 0);
    ASSERT_EQ(call.run(w.baseline, call.in), 0);
    EXPECT_NE(call.run(w.bf16_program, call.in), 0) << "bf16 program with an f32 output";
    OwnedCall bf16_call(w, KB_BF16);
    EXPECT_NE(bf16_call.run(w.reference, bf16_call.in), 0) << "reference with a bf16 output";
    ASSERT_EQ(bf16_call.run(w.bf16_program, bf16_call.in), 0);
    for (KernelFn kernel : {w.reference, w.baseline}) {
      std::vector<kb_tensor> bad(call.in.begin(), call.in.end() - 1);
      EXPECT_NE(call.run(kernel, bad), 0) << "too few inputs";
      EXPECT_NE(call.run(kernel, call.in, 0), 0) << "no output";
      bad = call.in;
      bad[0].rank += 1;
      EXPECT_NE(call.run(kernel, bad), 0) << "wrong rank";
      bad = call.in;
      bad[0].dtype = KB_F32;
      EXPECT_NE(call.run(kernel, bad), 0) << "wrong dtype";
      bad = call.in;
      bad[1].shape[2] += 1;  // a key length (1p, 4p, 5p) or kv head count (2p) of its own
      EXPECT_NE(call.run(kernel, bad), 0) << "mismatched key";
    }
  }
  // GQA: query heads must be a whole multiple of kv heads (2p: axis 2, 4p: axis 1).
  for (const auto& [id, axis] : {std::pair{"2p", 2}, std::pair{"4p", 1}}) {
    const Workload& w = *find_workload(id);
    OwnedCall call(w);
    std::vector<kb_tensor> bad = call.in;
    bad[1].shape[axis] = bad[2].shape[axis] = bad[0].shape[axis] - 1;
    EXPECT_NE(call.run(w.baseline, bad), 0) << id;
  }
  // 5p: the bias must be (H, S, S).
  const Workload& flex = *find_workload("5p");
  OwnedCall call(flex);
  std::vector<kb_tensor> bad = call.in;
  bad[3].shape[2] -= 1;
  EXPECT_NE(call.run(flex.baseline, bad), 0);
}

// The output a kernel ignoring q and k would give for 4p's (B, Hq, S, D) from v (B, Hkv, S, D):
// the running mean of the kv head's values over the causal prefix.
std::vector<float> running_mean_of_values(const ProblemInstance& instance) {
  const auto& v_spec = instance.problem().inputs[2].tensor;
  const auto& out_spec = instance.problem().outputs[0];
  const std::int64_t batch = out_spec.shape[0], hq = out_spec.shape[1], s = out_spec.shape[2],
                     d = out_spec.shape[3], hkv = v_spec.shape[1];
  const auto* v = instance.inputs()[2].as<bf16_t>();
  std::vector<float> out(static_cast<std::size_t>(batch * hq * s * d));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t h = 0; h < hq; ++h) {
      const bf16_t* vh = v + (b * hkv + h / (hq / hkv)) * s * d;
      float* oh = out.data() + (b * hq + h) * s * d;
      std::vector<double> sum(static_cast<std::size_t>(d), 0.0);
      for (std::int64_t i = 0; i < s; ++i)
        for (std::int64_t c = 0; c < d; ++c) {
          sum[static_cast<std::size_t>(c)] += bf16_to_f32(vh[i * d + c]);
          oh[i * d + c] = round_to_bf16(
              static_cast<float>(sum[static_cast<std::size_t>(c)] / static_cast<double>(i + 1)));
        }
    }
  return out;
}

TEST(AttentionWorkloads, UniformAttentionFails4p) {
  const Workload& w = *find_workload("4p");
  for (Size size : {Size::kSmoke, Size::kCpu}) {
    ProblemInstance instance(w, size);
    instance.generate(77);
    const auto oracle = to_f32(instance.run_trusted(w.baseline, 1, KB_F32)[0].view());
    const CheckResult check = check_outputs(instance.problem(), {running_mean_of_values(instance)},
                                            {oracle}, w.tolerance);
    std::cout << "[attention] 4p " << size_name(size) << " running mean of v: rel_l2 "
              << check.rel_l2_err << " max_abs " << check.max_abs_err << "\n";
    EXPECT_FALSE(check.passed) << size_name(size) << ": rel L2 " << check.rel_l2_err;
    EXPECT_GT(check.rel_l2_err, 2 * w.tolerance.max_rel_l2) << size_name(size);
  }
}

TEST(AttentionWorkloads, DroppingTheBiasFails5p) {
  const Workload& w = *find_workload("5p");
  for (Size size : {Size::kSmoke, Size::kCpu}) {
    ProblemInstance instance(w, size);
    instance.generate(78);
    const auto oracle = to_f32(instance.run_trusted(w.baseline, 1, KB_F32)[0].view());
    // The same inputs with a zero bias: a kernel that skips the score_mod.
    std::vector<HostTensor> inputs;
    std::vector<kb_tensor> views;
    for (const HostTensor& t : instance.inputs()) {
      inputs.emplace_back(t.spec());
      std::copy_n(static_cast<const char*>(t.data()), t.spec().numel() * 2,
                  static_cast<char*>(inputs.back().data()));
    }
    std::fill_n(inputs[3].as<bf16_t>(), inputs[3].spec().numel(), f32_to_bf16(0.0f));
    for (HostTensor& t : inputs) views.push_back(t.view());
    HostTensor out(instance.problem().outputs[0]);
    kb_tensor out_view = out.view();
    const kb_config config{1, 0, nullptr};
    ASSERT_EQ(w.baseline(&config, views.data(), 4, &out_view, 1), 0);
    const CheckResult check =
        check_outputs(instance.problem(), {to_f32(out_view)}, {oracle}, w.tolerance);
    std::cout << "[attention] 5p " << size_name(size) << " bias dropped: rel_l2 "
              << check.rel_l2_err << " max_abs " << check.max_abs_err << "\n";
    EXPECT_FALSE(check.passed) << size_name(size) << ": rel L2 " << check.rel_l2_err;
    EXPECT_GT(check.rel_l2_err, 2 * w.tolerance.max_rel_l2) << size_name(size);
  }
}

}  // namespace
}  // namespace kbench
