// The suite's invariants, for every workload the registry lists: it is the spec's workload (ids,
// names, groups, full-size inputs and FLOPs), its tolerance accepts the original program's bf16
// arithmetic (Workload::bf16_program) on 20 smoke and 3 cpu seeds, and rejects the degenerate
// outputs a gaming or broken kernel would produce (zeros, ones, the oracle's mean, the oracle with
// rows permuted, the oracle plus 5% noise), and on most draws those computed without one input or
// from a token subsample.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/bf16.h"
#include "core/tensor.h"
#include "harness/checker.h"
#include "harness/interop.h"
#include "harness/problem_instance.h"
#include "harness/suite_checks.h"
#include "workloads/registry.h"
#include "workloads/spec_text.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

constexpr int kSmokeSeeds = 20;
constexpr int kCpuSeeds = 3;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Draws for the outputs of skipped inputs and token subsamples: as many as `kbench validate` takes
// at smoke size (a few under the sanitizers, whose pass is about memory, not rates); at cpu size,
// where each costs an oracle per input, enough to fail one that passes on two of three.
constexpr int kSmokeDraws = kSanitized ? 6 : kRateDrawsAtSmoke;
constexpr int kCpuDraws = 3;

std::filesystem::path spec_path() {
  return std::filesystem::path(KBENCH_SOURCE_DIR) / ".." / "shared" / "spec" / "workloads.json";
}

// The integers of a spec shape string such as "(64,256) int32" or "(4096,)".
std::vector<std::int64_t> spec_shape(const std::string& text) {
  std::vector<std::int64_t> extents;
  const std::string inside = text.substr(0, text.find(')'));
  const std::regex number("[0-9]+");
  for (auto it = std::sregex_iterator(inside.begin(), inside.end(), number);
       it != std::sregex_iterator(); ++it)
    extents.push_back(std::stoll(it->str()));
  return extents;
}

TEST(Suite, IsTheSpecsFiftyWorkloadsInOrder) {
  std::ifstream file(spec_path());
  if (!file) GTEST_SKIP() << "no spec at " << spec_path();
  const auto spec = nlohmann::json::parse(file);
  const auto workloads = all_workloads();
  ASSERT_EQ(workloads.size(), spec.size());
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const Workload& w = *workloads[i];
    const auto& s = spec[i];
    SCOPED_TRACE(s["name"].get<std::string>());
    EXPECT_EQ(w.id(), s["id"].get<std::string>());
    EXPECT_EQ(w.name, s["name"].get<std::string>());
    EXPECT_EQ(group_name(w.group()), s["group"].get<std::string>());

    const Problem full = w.problem(Size::kFull);
    EXPECT_NEAR(full.flops, s["flops_full"].get<double>(), 1e-9 * s["flops_full"].get<double>());
    // Tensor inputs in the spec's order; Python scalars become kb_config params.
    std::vector<const nlohmann::json*> tensor_inputs;
    for (const auto& input : s["inputs_full"])
      if (input["shape"].get<std::string>().find("python") == std::string::npos)
        tensor_inputs.push_back(&input);
    ASSERT_EQ(full.inputs.size(), tensor_inputs.size());
    for (std::size_t k = 0; k < tensor_inputs.size(); ++k) {
      const auto& input = *tensor_inputs[k];
      EXPECT_EQ(full.inputs[k].tensor.name, input["name"].get<std::string>());
      EXPECT_EQ(full.inputs[k].tensor.shape, spec_shape(input["shape"].get<std::string>()))
          << full.inputs[k].tensor.name;
    }
    ASSERT_FALSE(full.outputs.empty());
    const std::vector<std::int64_t> out_shape =
        spec_shape(s["output_shape_full"].get<std::string>());
    if (!out_shape.empty()) {
      EXPECT_EQ(full.outputs[0].shape, out_shape);
    }
  }
}

// Config keys whose full-size value deliberately differs from the spec's config_full, each
// explained in docs/workloads.md: none today. An entry is "<id>.<key>".
const std::vector<std::string> kFullConfigDeviations = {};

// The same JSON kind: integer, float, flag, word or list (an integer where the spec has a float,
// or the reverse, would change how the original computes with it).
bool same_kind(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  const bool a_int = a.is_number_integer(), b_int = b.is_number_integer();
  return a.type() == b.type() || (a_int && b_int);
}

// scaffolds/ and the registry agree: each file there is the scaffold of the workload it is named
// after, byte for byte (a file named for no workload, or renamed, would be embedded and never
// printed), and each workload with a scaffold has its file.
TEST(Suite, ScaffoldFilesAreTheWorkloadsScaffolds) {
  std::size_t with_scaffold = 0;
  for (const Workload* w : all_workloads()) with_scaffold += w->scaffold.empty() ? 0 : 1;
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(KBENCH_SOURCE_DIR) / "scaffolds")) {
    if (entry.path().extension() != ".cpp") continue;
    ++files;
    const std::string name = entry.path().stem().string();
    const auto workloads = all_workloads();
    const auto it = std::find_if(workloads.begin(), workloads.end(),
                                 [&](const Workload* w) { return w->name == name; });
    ASSERT_NE(it, workloads.end()) << entry.path() << " names no workload";
    std::ifstream file(entry.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
    EXPECT_EQ((*it)->scaffold, text) << name;
  }
  EXPECT_EQ(files, with_scaffold);
  EXPECT_GT(files, 0u);
}

// Every workload's file states its operator (Operator ... Output), embedded for `kbench scaffold`
// and the agents' prompts; the statement ends where the file's FLOPs or Character section starts.
TEST(Suite, EveryWorkloadStatesItsOperator) {
  for (const Workload* w : all_workloads()) {
    const std::string_view spec = spec_text(*w);
    EXPECT_TRUE(spec.starts_with("Operator  ")) << w->name << ":\n" << spec;
    EXPECT_NE(spec.find("\nInputs    "), std::string_view::npos) << w->name;
    EXPECT_NE(spec.find("\nOutput    "), std::string_view::npos) << w->name;
    EXPECT_TRUE(spec.ends_with("\n")) << w->name;
    // No later section, and no comment mark left at a line's start.
    for (const char* later : {"\nFLOPs", "\nCharacter", "\nDeviations", "\n//"})
      EXPECT_EQ(spec.find(later), std::string_view::npos) << w->name << " holds " << later;
  }
  EXPECT_NE(spec_text(*find_workload("12p")).find("rsqrt(mean(x^2, axis=-1) + epsilon)"),
            std::string_view::npos);
}

// The exported configuration (workload.json's "config") has exactly the spec's config_full keys,
// in its order and of its kinds, at every size, and the spec's values at full size: the original
// program then runs on any size's inputs with the constants those inputs were drawn for.
TEST(Suite, ConfigIsTheSpecsConfigFullAtEverySize) {
  std::ifstream file(spec_path());
  if (!file) GTEST_SKIP() << "no spec at " << spec_path();
  const auto spec = nlohmann::ordered_json::parse(file);
  const auto workloads = all_workloads();
  ASSERT_EQ(workloads.size(), spec.size());
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const Workload& w = *workloads[i];
    const auto& want = spec[i]["config_full"];
    for (Size size : {Size::kSmoke, Size::kCpu, Size::kFull}) {
      SCOPED_TRACE(std::string(w.name) + " " + size_name(size));
      const Problem problem = w.problem(size);
      const nlohmann::ordered_json got = config_json(problem.config);
      std::vector<std::string> got_keys, want_keys;
      for (const auto& [key, value] : got.items()) got_keys.push_back(key);
      for (const auto& [key, value] : want.items()) want_keys.push_back(key);
      ASSERT_EQ(got_keys, want_keys);
      for (const auto& [key, value] : want.items()) {
        EXPECT_TRUE(same_kind(got[key], value)) << key << ": " << got[key] << " vs " << value;
        const bool deviation =
            std::find(kFullConfigDeviations.begin(), kFullConfigDeviations.end(),
                      std::string(w.id()) + "." + key) != kFullConfigDeviations.end();
        if (size != Size::kFull || deviation) continue;
        if (value.is_number()) {
          EXPECT_DOUBLE_EQ(got[key].get<double>(), value.get<double>()) << key;
        } else {
          EXPECT_EQ(got[key], value) << key;
        }
      }
      // Module-level constants besides CONFIG: the spec's scenario_constants keys (7p).
      std::vector<std::string> scenario_keys, want_scenario;
      for (const ConfigEntry& e : problem.scenario) scenario_keys.push_back(e.name);
      if (spec[i].contains("scenario_constants"))
        for (const auto& [key, value] : spec[i]["scenario_constants"].items())
          want_scenario.push_back(key);
      EXPECT_EQ(scenario_keys, want_scenario);
    }
  }
}

class SuiteWorkload : public ::testing::TestWithParam<const Workload*> {};

class Sizes {
 public:
  static int seeds(Size size) { return size == Size::kSmoke ? kSmokeSeeds : kCpuSeeds; }
};

void expect_faithful_program_passes(const Workload& w, Size size) {
  ASSERT_NE(w.bf16_program, nullptr) << w.name << " has no bf16_program";
  ProblemInstance instance(w, size);
  for (int s = 0; s < Sizes::seeds(size); ++s) {
    const std::uint64_t seed = 0x5EED0000u + static_cast<std::uint64_t>(s) * 7919u;
    instance.generate(seed);
    const auto oracle = to_f32(instance.run_trusted(w.baseline, 1, KB_F32));
    const auto program = to_f32(instance.run_trusted(w.bf16_program, 1, KB_BF16));
    const auto magnitudes = to_f32(instance.term_magnitudes(1));
    const CheckResult check =
        check_outputs(instance.problem(), program, oracle, w.tolerance, magnitudes);
    EXPECT_TRUE(check.passed) << w.name << " " << size_name(size) << " seed " << seed << ": "
                              << check.detail;
    std::cout << "[suite] " << w.id() << " " << size_name(size) << " bf16_program seed " << seed
              << ": rel_l2 " << check.rel_l2_err << " max_abs " << check.max_abs_err
              << " bound fraction " << bound_fraction(program, oracle, w.tolerance, magnitudes)
              << "\n";
  }
}

// The outputs a broken or gaming kernel writes whatever the draw (zeros, ones, the mean, rows
// permuted, 5% noise) must fail on one seed; those of a skipped input or a token subsample, whose
// distance is a matter of the draw, on more than half of the draws (suite_checks.h).
void expect_degenerates_fail(const Workload& w, Size size) {
  ProblemInstance instance(w, size);
  const std::uint64_t seed = 0xDE6E0000u + static_cast<std::uint64_t>(size);
  instance.generate(seed);
  const auto oracle = to_f32(instance.run_trusted(w.baseline, 1, KB_F32));
  const auto magnitudes = to_f32(instance.term_magnitudes(1));
  for (const DegenerateOutput& d : degenerate_outputs(instance.problem(), oracle, seed)) {
    const CheckResult check =
        check_outputs(instance.problem(), d.outputs, oracle, w.tolerance, magnitudes);
    std::cout << "[suite] " << w.id() << " " << size_name(size) << " degenerate '" << d.name
              << "': rel_l2 " << check.rel_l2_err << " max_abs " << check.max_abs_err
              << " bound fraction " << bound_fraction(d.outputs, oracle, w.tolerance, magnitudes)
              << (check.passed ? " PASSES" : " rejected") << "\n";
    EXPECT_FALSE(check.passed) << w.name << " " << size_name(size) << ": the degenerate output '"
                               << d.name << "' passes (rel L2 " << check.rel_l2_err << ")";
  }
  const int draws = size == Size::kSmoke ? kSmokeDraws : kCpuDraws;
  for (const DrawDependentRate& rate : draw_dependent_rates(instance, draws, seed + 1, 1)) {
    std::cout << "[suite] " << w.id() << " " << size_name(size) << " degenerate '" << rate.name
              << "': passes on " << rate.passed << " of " << rate.draws
              << " draws, least bound fraction " << rate.closest << "\n";
    EXPECT_FALSE(passes_too_often(rate))
        << w.name << " " << size_name(size) << ": the output '" << rate.name << "' passes on "
        << rate.passed << " of " << rate.draws << " draws";
  }
}

TEST_P(SuiteWorkload, FaithfulBf16ProgramPassesSmoke) {
  expect_faithful_program_passes(*GetParam(), Size::kSmoke);
}

TEST_P(SuiteWorkload, FaithfulBf16ProgramPassesCpu) {
  if (kSanitized) GTEST_SKIP() << "cpu size runs in the optimized pass";
  expect_faithful_program_passes(*GetParam(), Size::kCpu);
}

TEST_P(SuiteWorkload, DegenerateOutputsFailSmoke) {
  expect_degenerates_fail(*GetParam(), Size::kSmoke);
}

TEST_P(SuiteWorkload, DegenerateOutputsFailCpu) {
  if (kSanitized) GTEST_SKIP() << "cpu size runs in the optimized pass";
  expect_degenerates_fail(*GetParam(), Size::kCpu);
}

TEST(SkippedInputs, OneOutputPerRandomFloatInputWithThatInputAtItsCentre) {
  ProblemInstance gemm(*find_workload("8p"), Size::kSmoke);
  gemm.generate(5);
  const std::vector<DegenerateOutput> without = skipped_input_outputs(gemm, 1);
  ASSERT_EQ(without.size(), 2u);
  EXPECT_EQ(without[0].name, "without A (at 0)");
  EXPECT_EQ(without[1].name, "without B (at 0)");
  for (const DegenerateOutput& d : without)  // A @ B with either operand all zeros
    EXPECT_TRUE(
        std::all_of(d.outputs[0].begin(), d.outputs[0].end(), [](float v) { return v == 0.0f; }));
  // 22k's conv_bias is cancelled by the instance norm: left out, or alone when asked for.
  ProblemInstance conv(*find_workload("22k"), Size::kSmoke);
  conv.generate(5);
  std::vector<std::string> names;
  for (const DegenerateOutput& d : skipped_input_outputs(conv, 1)) names.push_back(d.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"without x (at 0.5)", "without weight (at 0)",
                                      "without in_weight (at 1)", "without in_bias (at 0)"}));
  const std::vector<DegenerateOutput> cancelled = skipped_input_outputs(conv, 1, true);
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0].name, "without conv_bias (at 0)");
}

TEST(DrawDependent, RatesCountEachOutputOverTheHeldDrawAndFreshOnes) {
  ProblemInstance loss(*find_workload("13p"), Size::kSmoke);
  loss.generate(5);
  std::vector<std::string> expected;
  for (const DegenerateOutput& d : skipped_input_outputs(loss, 1)) expected.push_back(d.name);
  expected.push_back("token-subsample estimate");
  const std::vector<DrawDependentRate> rates = draw_dependent_rates(loss, 4, 100, 1);
  std::vector<std::string> names;
  for (const DrawDependentRate& rate : rates) {
    names.push_back(rate.name);
    EXPECT_EQ(rate.draws, 4);
    EXPECT_GE(rate.passed, 0);
    EXPECT_LE(rate.passed, 4);
    EXPECT_GT(rate.closest, 0);
  }
  EXPECT_EQ(names, expected);
  // The held draw, then seeds 100, 101, 102: the instance ends on the last.
  ProblemInstance last(*find_workload("13p"), Size::kSmoke);
  last.generate(102);
  ASSERT_EQ(loss.inputs().size(), last.inputs().size());
  for (std::size_t i = 0; i < last.inputs().size(); ++i) {
    const std::size_t bytes = last.inputs()[i].spec().bytes();
    EXPECT_EQ(std::memcmp(loss.inputs()[i].data(), last.inputs()[i].data(), bytes), 0) << i;
  }
}

TEST(DrawDependent, PassingOnMoreThanHalfTheDrawsIsTooOften) {
  EXPECT_FALSE(passes_too_often({"x", 3, 1}));
  EXPECT_TRUE(passes_too_often({"x", 3, 2}));
  EXPECT_FALSE(passes_too_often({"x", 24, 12}));
  EXPECT_TRUE(passes_too_often({"x", 24, 13}));
  EXPECT_TRUE(passes_too_often({"x", 1, 1}));
}

// An input a workload calls cancelled may be skipped: the rule must accept the output without it,
// or the claim (and the exemption from DegenerateOutputsFail) is wrong.
TEST_P(SuiteWorkload, CancelledInputsAreCancelled) {
  const Workload& w = *GetParam();
  for (std::string_view name : w.cancelled_inputs) {
    const auto& inputs = w.problem(Size::kSmoke).inputs;
    EXPECT_TRUE(std::any_of(inputs.begin(), inputs.end(),
                            [&](const InputSpec& in) { return in.tensor.name == name; }))
        << w.name << " has no input " << name;
  }
  for (Size size : {Size::kSmoke, Size::kCpu}) {
    if (size == Size::kCpu && (kSanitized || w.cancelled_inputs.empty())) continue;
    ProblemInstance instance(w, size);
    instance.generate(0xCA4CE1u);
    const auto oracle = to_f32(instance.run_trusted(w.baseline, 1, KB_F32));
    const auto magnitudes = to_f32(instance.term_magnitudes(1));
    const std::vector<DegenerateOutput> without = skipped_input_outputs(instance, 1, true);
    EXPECT_EQ(without.size(), w.cancelled_inputs.size()) << w.name;
    for (const DegenerateOutput& d : without)
      EXPECT_TRUE(
          check_outputs(instance.problem(), d.outputs, oracle, w.tolerance, magnitudes).passed)
          << w.name << " " << size_name(size) << ": the output " << d.name << " fails the rule";
  }
}

// The baseline (both output dtypes) against the double-precision reference at smoke size: what
// `kbench validate` reports, enforced.
TEST_P(SuiteWorkload, BaselineMatchesReferenceSmoke) {
  const Workload& w = *GetParam();
  ProblemInstance instance(w, Size::kSmoke);
  for (std::uint64_t seed : {11u, 12u}) {
    instance.generate(seed);
    const auto truth = to_f32(instance.run_trusted(w.reference, 1, KB_F32));
    const auto magnitudes = to_f32(instance.term_magnitudes(1));
    for (kb_dtype dtype : {KB_F32, KB_BF16}) {
      const auto baseline = to_f32(instance.run_trusted(w.baseline, 1, dtype));
      const CheckResult check =
          check_outputs(instance.problem(), baseline, truth, w.tolerance, magnitudes);
      EXPECT_TRUE(check.passed) << w.name << " baseline (" << dtype_name(dtype) << " outputs) seed "
                                << seed << ": " << check.detail;
    }
  }
}

TEST_P(SuiteWorkload, SizePresetsAreConsistent) {
  const Workload& w = *GetParam();
  for (Size size : {Size::kSmoke, Size::kCpu, Size::kFull}) {
    const Problem p = w.problem(size);
    EXPECT_GT(p.flops, 0) << size_name(size);
    EXPECT_GT(p.min_bytes, 0) << size_name(size);
    // The memory floor never counts more than every tensor once.
    EXPECT_LE(p.min_bytes, tensor_bytes(p)) << size_name(size);
    EXPECT_FALSE(p.outputs.empty());
  }
  EXPECT_LT(w.problem(Size::kSmoke).flops, w.problem(Size::kCpu).flops);
  EXPECT_LE(w.problem(Size::kCpu).flops, w.problem(Size::kFull).flops);
}

// The causal attention workloads' formulas count the masked half; their essential FLOPs (the
// roofline's floor) count the visible pairs: S(S+1)/2 of S^2 for a square causal mask.
TEST(EssentialFlops, CausalAttentionCountsOnlyTheVisiblePairs) {
  const Problem flash = find_workload("1p")->problem(Size::kCpu);  // B 1, H 8, S 1024, D 128
  EXPECT_DOUBLE_EQ(flash.essential_flops, 4.0 * 8 * 128 * (1024.0 * 1025 / 2));
  for (const char* id : {"1p", "2p", "3p", "4p", "5p", "7p", "15p", "16p"}) {
    for (Size size : {Size::kSmoke, Size::kCpu}) {
      // 4p's formula omits the batch its essential FLOPs include: comparable where B is 1.
      if (std::string_view(id) == "4p" && size == Size::kSmoke) continue;
      const Problem p = find_workload(id)->problem(size);
      EXPECT_GT(p.essential_flops, 0.3 * p.flops) << id << " " << size_name(size);
      EXPECT_LT(p.essential_flops, p.flops) << id << " " << size_name(size);
    }
  }
  EXPECT_EQ(find_workload("8p")->problem(Size::kCpu).essential_flops, 0);  // nothing to skip
  // RetNet's and Mamba-2's masked scores are exact zeros (decay 0 above the diagonal).
  const Problem retention = find_workload("15p")->problem(Size::kCpu);  // 1, 16, 512, 256
  EXPECT_DOUBLE_EQ(retention.essential_flops, 4.0 * 16 * 256 * (512.0 * 513 / 2));
}

// 28k's formula counts the taps of its transposed conv's zero-dilated form; its floor counts the
// taps that meet an input element, 4 per axis (3 at either end), about 1/8 of the formula's.
TEST(EssentialFlops, TransposedConvCountsOnlyTheLiveTaps) {
  const Problem p = find_workload("28k")->problem(Size::kCpu);  // N 2, 32 -> 64, 8 x 16 x 32
  EXPECT_DOUBLE_EQ(p.essential_flops, 2.0 * 2 * 32 * 64 * (30 * 62 * 126));
  EXPECT_LT(p.essential_flops, 0.125 * p.flops);
  // A valid forward conv has no tap to skip.
  const Problem forward = find_workload("18k")->problem(Size::kCpu);
  EXPECT_DOUBLE_EQ(forward.essential_flops, forward.flops);
}

// 17p's masked pairs feed zeros into four projections and every contraction term they enter; its
// floor counts the live work of a draw with fewer unmasked pairs than any seed gives.
TEST(EssentialFlops, TriangleMultiplicationLeavesOutWhatMaskedPairsFeed) {
  const Workload& w = *find_workload("17p");
  for (Size size : {Size::kSmoke, Size::kCpu}) {
    ProblemInstance instance(w, size);
    const Problem& p = instance.problem();
    const std::int64_t n = p.inputs[0].tensor.shape[0], c = p.inputs[0].tensor.shape[2];
    const double projection = 2.0 * c * c, term = 2.0 * c;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      instance.generate(seed);
      const bf16_t* mask = instance.inputs()[1].as<bf16_t>();
      // Live work of this draw: 4 projections per unmasked pair, a contraction term per (i, j, k)
      // with both (i, k) and (j, k) unmasked, and the output projection and gate everywhere.
      double live = 2 * projection * static_cast<double>(n * n);
      for (std::int64_t k = 0; k < n; ++k) {
        double unmasked_in_column = 0;
        for (std::int64_t i = 0; i < n; ++i)
          unmasked_in_column += bf16_to_f32(mask[i * n + k]) != 0.0f ? 1 : 0;
        live +=
            4 * projection * unmasked_in_column + term * unmasked_in_column * unmasked_in_column;
      }
      EXPECT_LE(p.essential_flops, live) << size_name(size) << " seed " << seed;
      EXPECT_GT(p.essential_flops, (size == Size::kSmoke ? 0.85 : 0.97) * live)
          << size_name(size) << " seed " << seed;
    }
    EXPECT_LT(p.essential_flops, 0.9 * p.flops) << size_name(size);
  }
}

// A kernel need not read the pages no active sequence reaches, so the memory floor leaves them out.
TEST(MinBytes, RaggedPagedAttentionCountsOnlyThePagesItsSequencesReach) {
  for (Size size : {Size::kSmoke, Size::kCpu, Size::kFull}) {
    const Problem p = find_workload("7p")->problem(size);
    EXPECT_LT(p.min_bytes, tensor_bytes(p)) << size_name(size);
    EXPECT_GT(p.min_bytes, 0.25 * tensor_bytes(p)) << size_name(size);
  }
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, SuiteWorkload,
                         ::testing::ValuesIn(all_workloads().begin(), all_workloads().end()),
                         [](const ::testing::TestParamInfo<const Workload*>& workload) {
                           return std::string(workload.param->name);
                         });

}  // namespace
}  // namespace kbench
