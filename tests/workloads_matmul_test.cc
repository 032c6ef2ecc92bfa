// The matmul-shaped workloads (8p GEMM, 41k Gemm+Add+ReLU, 9p SwiGLU MLP) against their spec
// entries: presets and FLOPs as specified, the baseline within tolerance of the double-precision
// reference in both output dtypes, malformed calls refused, and each scaffold compiled and run as a
// candidate would be.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/input_gen.h"
#include "core/tensor.h"
#include "kbench/kernel.h"
#include "workloads/registry.h"
#include "workloads/workload.h"

namespace kbench {
namespace {

// What /work/shared/spec/workloads.json says about one workload, restated for the test.
struct ExpectedInput {
  std::string name;
  std::vector<std::int64_t> full_shape;
  InitRule init;
};

struct SpecEntry {
  std::string id;
  std::string name;
  Group group;
  std::vector<ExpectedInput> inputs;
  std::vector<std::int64_t> output_full_shape;
  double flops_full;
  // The spec's flops_formula evaluated on a problem's input extents.
  std::function<double(const Problem&)> flops_formula;
  // True when the extents of a problem's tensors agree where the operator shares a dimension.
  std::function<bool(const Problem&)> shapes_agree;
};

void PrintTo(const SpecEntry& entry, std::ostream* os) {
  *os << entry.id;
}

// Extent `axis` of input `index` of `problem`, as a double for FLOP formulas.
double extent(const Problem& problem, std::size_t index, std::size_t axis) {
  return static_cast<double>(problem.inputs.at(index).tensor.shape.at(axis));
}

const std::vector<std::int64_t>& shape(const Problem& problem, std::size_t index) {
  return problem.inputs.at(index).tensor.shape;
}

std::vector<SpecEntry> spec_entries() {
  return {
      {
          .id = "8p",
          .name = "8p_GEMM",
          .group = Group::kProduction,
          .inputs = {{"A", {8192, 8192}, InitRule::normal(1.0)},
                     {"B", {8192, 28672}, InitRule::normal(0.02)}},
          .output_full_shape = {8192, 28672},
          .flops_full = 3848290697216.0,
          .flops_formula =  // 2*M*K*N
          [](const Problem& p) { return 2 * extent(p, 0, 0) * extent(p, 0, 1) * extent(p, 1, 1); },
          .shapes_agree =
              [](const Problem& p) {
                const auto &a = shape(p, 0), &b = shape(p, 1);
                return a[1] == b[0] && p.outputs[0].shape == std::vector{a[0], b[1]};
              },
      },
      {
          .id = "41k",
          .name = "41k_Gemm_Add_ReLU",
          .group = Group::kKernelBenchL2,
          .inputs = {{"x", {4096, 8192}, InitRule::uniform(0.0, 1.0)},
                     {"weight", {8192, 8192}, InitRule::normal(0.02)},
                     {"bias", {8192}, InitRule::normal(0.02)}},
          .output_full_shape = {4096, 8192},
          .flops_full = 549755813888.0,
          .flops_formula =  // 2*M*K*N
          [](const Problem& p) { return 2 * extent(p, 0, 0) * extent(p, 0, 1) * extent(p, 1, 1); },
          .shapes_agree =
              [](const Problem& p) {
                const auto &x = shape(p, 0), &w = shape(p, 1), &bias = shape(p, 2);
                return x[1] == w[0] && bias == std::vector{w[1]} &&
                       p.outputs[0].shape == std::vector{x[0], w[1]};
              },
      },
      {
          .id = "9p",
          .name = "9p_SwiGLU_MLP",
          .group = Group::kProduction,
          .inputs = {{"x", {2, 4096, 8192}, InitRule::normal(1.0)},
                     {"gate_kernel", {8192, 28672}, InitRule::normal(0.02)},
                     {"up_kernel", {8192, 28672}, InitRule::normal(0.02)},
                     {"down_kernel", {28672, 8192}, InitRule::normal(0.02)}},
          .output_full_shape = {2, 4096, 8192},
          .flops_full = 11544872091648.0,
          .flops_formula =  // B*S*E*M*2*3
          [](const Problem& p) {
            return extent(p, 0, 0) * extent(p, 0, 1) * extent(p, 0, 2) * extent(p, 1, 1) * 2 * 3;
          },
          .shapes_agree =
              [](const Problem& p) {
                const auto &x = shape(p, 0), &gate = shape(p, 1), &up = shape(p, 2),
                           &down = shape(p, 3);
                return x.size() == 3 && gate[0] == x[2] && up == gate &&
                       down == std::vector{gate[1], gate[0]} && p.outputs[0].shape == x;
              },
      },
  };
}

// Inputs of `problem` drawn from `seed`, input i from Philox stream i.
std::vector<HostTensor> make_inputs(const Problem& problem, std::uint64_t seed) {
  std::vector<HostTensor> inputs;
  for (std::size_t i = 0; i < problem.inputs.size(); ++i) {
    HostTensor& t = inputs.emplace_back(problem.inputs[i].tensor);
    kb_tensor view = t.view();
    fill_input(problem.inputs[i].init, seed, static_cast<std::uint32_t>(i), view);
  }
  return inputs;
}

// Runs `kernel` with outputs of dtype `out_dtype` prefilled with NaN (as kbench does, so an
// unwritten element fails the comparison) and returns the first output widened to f32.
std::vector<float> run(KernelFn kernel, const Problem& problem, std::vector<HostTensor>& inputs,
                       kb_dtype out_dtype) {
  std::vector<HostTensor> outputs;
  for (TensorSpec spec : problem.outputs) {
    spec.dtype = out_dtype;
    HostTensor& t = outputs.emplace_back(std::move(spec));
    std::memset(t.data(), 0xff, t.spec().bytes());  // all-ones is a NaN in bf16 and f32 alike
  }
  std::vector<kb_tensor> in_views = views_of(inputs);
  std::vector<kb_tensor> out_views = views_of(outputs);
  const std::vector<kb_param> params = abi_params(problem);
  const kb_config cfg{1, static_cast<std::int32_t>(params.size()), params.data()};
  const int rc = kernel(&cfg, in_views.data(), static_cast<std::int32_t>(in_views.size()),
                        out_views.data(), static_cast<std::int32_t>(out_views.size()));
  EXPECT_EQ(rc, 0) << "kernel returned an error";
  return to_f32(out_views[0]);
}

// The brief's rule: |out - ref| <= 1e-2 + 1e-2 |ref| for every element and ||out - ref|| / ||ref||
// <= 1e-2; a failure names the worst element.
testing::AssertionResult close_to_reference(const std::vector<float>& out,
                                            const std::vector<float>& ref) {
  if (out.size() != ref.size()) return testing::AssertionFailure() << "size differs";
  double err_sq = 0, ref_sq = 0, worst_excess = 0;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      return testing::AssertionFailure() << "element " << i << " is " << out[i];
    }
    const double diff = std::abs(static_cast<double>(out[i]) - ref[i]);
    const double excess = diff - (1e-2 + 1e-2 * std::abs(ref[i]));
    if (excess > worst_excess) worst_excess = excess, worst = i;
    err_sq += diff * diff;
    ref_sq += static_cast<double>(ref[i]) * ref[i];
  }
  if (worst_excess > 0) {
    return testing::AssertionFailure()
           << "element " << worst << ": got " << out[worst] << ", reference " << ref[worst];
  }
  if (ref_sq == 0) return testing::AssertionFailure() << "reference is all zeros: a vacuous test";
  const double rel_l2 = std::sqrt(err_sq / ref_sq);
  if (rel_l2 > 1e-2) return testing::AssertionFailure() << "relative L2 error " << rel_l2;
  return testing::AssertionSuccess() << "relative L2 error " << rel_l2;
}

class MatmulWorkloadTest : public testing::TestWithParam<SpecEntry> {
 protected:
  void SetUp() override {
    workload_ = find_workload(GetParam().id);
    ASSERT_NE(workload_, nullptr) << GetParam().id << " is not in workloads.inc";
  }
  const Workload* workload_ = nullptr;
};

TEST_P(MatmulWorkloadTest, IdentityIsTheSpecs) {
  const SpecEntry& spec = GetParam();
  EXPECT_EQ(workload_->id(), spec.id);
  EXPECT_EQ(workload_->name, spec.name);
  EXPECT_EQ(find_workload(spec.name), workload_);
  EXPECT_EQ(workload_->group(), spec.group);
  EXPECT_FALSE(workload_->source_model().empty());
  EXPECT_FALSE(workload_->summary.empty());
}

TEST_P(MatmulWorkloadTest, FullPresetIsTheSpecShape) {
  const SpecEntry& spec = GetParam();
  const Problem problem = workload_->problem(Size::kFull);
  EXPECT_TRUE(problem.params.empty());
  ASSERT_EQ(problem.inputs.size(), spec.inputs.size());
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const InputSpec& actual = problem.inputs[i];
    const ExpectedInput& expected = spec.inputs[i];
    EXPECT_EQ(actual.tensor.name, expected.name);
    EXPECT_EQ(actual.tensor.dtype, KB_BF16) << expected.name;
    EXPECT_EQ(actual.tensor.shape, expected.full_shape) << expected.name;
    EXPECT_EQ(actual.init.kind, expected.init.kind) << expected.name;
    EXPECT_DOUBLE_EQ(actual.init.scale, expected.init.scale) << expected.name;
    EXPECT_DOUBLE_EQ(actual.init.shift, expected.init.shift) << expected.name;
  }
  ASSERT_EQ(problem.outputs.size(), 1u);
  EXPECT_EQ(problem.outputs[0].name, "out");
  EXPECT_EQ(problem.outputs[0].dtype, KB_BF16);
  EXPECT_EQ(problem.outputs[0].shape, spec.output_full_shape);
  EXPECT_EQ(problem.flops, spec.flops_full);
}

TEST_P(MatmulWorkloadTest, EveryPresetFollowsTheSpecFormula) {
  const SpecEntry& spec = GetParam();
  for (const Size size : {Size::kSmoke, Size::kCpu, Size::kFull}) {
    SCOPED_TRACE(size_name(size));
    const Problem problem = workload_->problem(size);
    ASSERT_EQ(problem.inputs.size(), spec.inputs.size());
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
      EXPECT_EQ(problem.inputs[i].tensor.name, spec.inputs[i].name);
      EXPECT_EQ(problem.inputs[i].tensor.shape.size(), spec.inputs[i].full_shape.size());
    }
    ASSERT_EQ(problem.outputs.size(), 1u);
    EXPECT_TRUE(spec.shapes_agree(problem));
    EXPECT_EQ(problem.flops, spec.flops_formula(problem));
    EXPECT_EQ(problem.min_bytes, tensor_bytes(problem));
  }
}

TEST_P(MatmulWorkloadTest, SmokeBaselineMatchesReferenceInBothOutputDtypes) {
  const Problem problem = workload_->problem(Size::kSmoke);
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<HostTensor> inputs = make_inputs(problem, seed);
    const std::vector<float> ref = run(workload_->reference, problem, inputs, KB_F32);
    EXPECT_TRUE(close_to_reference(run(workload_->baseline, problem, inputs, KB_F32), ref))
        << "f32 baseline (the oracle)";
    EXPECT_TRUE(close_to_reference(run(workload_->baseline, problem, inputs, KB_BF16), ref))
        << "bf16 baseline (the timed one)";
  }
}

TEST_P(MatmulWorkloadTest, MalformedCallsAreRefused) {
  const Problem problem = workload_->problem(Size::kSmoke);
  std::vector<HostTensor> inputs = make_inputs(problem, 1);
  HostTensor output_f32(TensorSpec{"out", KB_F32, problem.outputs[0].shape});
  const kb_config cfg{1, 0, nullptr};
  const auto num_inputs = static_cast<std::int32_t>(inputs.size());
  for (const KernelFn kernel : {workload_->reference, workload_->baseline}) {
    std::vector<kb_tensor> in = views_of(inputs);
    kb_tensor out = output_f32.view();
    EXPECT_NE(kernel(&cfg, in.data(), num_inputs - 1, &out, 1), 0) << "one input missing";
    EXPECT_NE(kernel(&cfg, in.data(), num_inputs, &out, 0), 0) << "no output";

    kb_tensor wrong_extent = out;
    wrong_extent.shape[wrong_extent.rank - 1] += 1;
    EXPECT_NE(kernel(&cfg, in.data(), num_inputs, &wrong_extent, 1), 0) << "output too wide";

    kb_tensor wrong_rank = out;
    wrong_rank.rank -= 1;
    EXPECT_NE(kernel(&cfg, in.data(), num_inputs, &wrong_rank, 1), 0) << "output rank";

    for (std::size_t i = 0; i < in.size(); ++i) {
      std::vector<kb_tensor> bad = in;
      bad[i].dtype = KB_F32;
      EXPECT_NE(kernel(&cfg, bad.data(), num_inputs, &out, 1), 0) << "input " << i << " as f32";
      bad = in;
      bad[i].shape[0] += 1;
      EXPECT_NE(kernel(&cfg, bad.data(), num_inputs, &out, 1), 0) << "input " << i << " extent";
    }
  }
  // The reference writes f32 only: it is the truth, never timed.
  HostTensor output_bf16(problem.outputs[0]);
  std::vector<kb_tensor> in = views_of(inputs);
  kb_tensor out = output_bf16.view();
  EXPECT_NE(workload_->reference(&cfg, in.data(), num_inputs, &out, 1), 0);
}

// A temporary directory removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kbench_scaffold_XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_P(MatmulWorkloadTest, ScaffoldCompilesAndMatchesReference) {
  if (std::system("g++ --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "g++ is not installed";
  const TempDir dir;
  ASSERT_FALSE(dir.path().empty()) << "mkdtemp failed";
  const std::filesystem::path source = dir.path() / "candidate.cc";
  const std::filesystem::path library = dir.path() / "candidate.so";
  const std::filesystem::path log = dir.path() / "compile.log";
  std::ofstream(source) << workload_->scaffold;

  // The candidate compile command of the brief, plus the ABI header's directory.
  const std::string command = "g++ -std=c++20 -O3 -march=native -fPIC -shared -I'" +
                              std::string(KBENCH_SOURCE_DIR) + "/include' '" + source.string() +
                              "' -o '" + library.string() + "' >'" + log.string() + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << read_file(log);

  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  const auto kb_run = reinterpret_cast<KernelFn>(dlsym(handle, "kb_run"));
  ASSERT_NE(kb_run, nullptr) << "kb_run is not exported";

  const Problem problem = workload_->problem(Size::kSmoke);
  std::vector<HostTensor> inputs = make_inputs(problem, 7);
  const std::vector<float> ref = run(workload_->reference, problem, inputs, KB_F32);
  EXPECT_TRUE(close_to_reference(run(kb_run, problem, inputs, KB_BF16), ref));
  dlclose(handle);
}

INSTANTIATE_TEST_SUITE_P(SpecEntries, MatmulWorkloadTest, testing::ValuesIn(spec_entries()),
                         [](const testing::TestParamInfo<SpecEntry>& entry) {
                           return entry.param.id;
                         });

}  // namespace
}  // namespace kbench
