// `kbench export` and `kbench check` end to end through the real binary: exported files NumPy can
// read, the exported oracle judged correct, and every kind of bad submission (wrong values, shape,
// dtype, truncated, missing, NaN) an 'incorrect' verdict with a message rather than a crash; with
// python3-numpy installed, a NumPy RMSNorm checked correct.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cli_support.h"
#include "core/bf16.h"
#include "core/f16.h"
#include "core/npy.h"

namespace kbench::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kSeed = 20240601;

// A fresh directory private to the calling test and process.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "kbench-tests" /
                       ("interop-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Exports `workload` at smoke size with kSeed into a fresh directory named after the test.
fs::path exported(const std::string& workload, const std::string& test) {
  const fs::path dir = fresh_dir(test) / "export";
  const CliRun run = run_kbench("export --workload " + workload + " --size smoke --seed " +
                                std::to_string(kSeed) + " --out " + dir.string());
  EXPECT_EQ(run.exit_code, 0) << run.out;
  return dir;
}

nlohmann::json check_json(const std::string& workload, const fs::path& outputs,
                          const std::string& extra = "--seed " + std::to_string(kSeed)) {
  const CliRun run =
      run_kbench("check --workload " + workload + " --size smoke --json --no-record " + extra +
                 " --outputs " + outputs.string());
  EXPECT_EQ(run.exit_code, 0) << run.out;
  return nlohmann::json::parse(run.out);
}

std::vector<float> floats_of(const NpyArray& array) {
  EXPECT_EQ(array.type, NpyType::kF32);
  std::vector<float> values(static_cast<std::size_t>(array.numel()));
  std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

// The oracle export wrote for output `name`, and its shape.
std::vector<float> oracle(const fs::path& dir, const std::string& name,
                          std::vector<std::int64_t>* shape = nullptr) {
  const NpyArray array = read_npy(dir / "oracle" / (name + ".npy"));
  if (shape) *shape = array.shape;
  return floats_of(array);
}

const std::vector<std::int64_t> kRmsShape = {2, 37, 61};  // 12p at smoke size

// A directory holding one file `file` with `values` of `type` in `shape`.
fs::path submission(const std::string& test, const std::string& file, NpyType type,
                    const std::vector<std::int64_t>& shape, const void* values) {
  const fs::path dir = fresh_dir(test) / "outputs";
  fs::create_directories(dir);
  write_npy(dir / file, type, shape, values);
  return dir;
}

void expect_incorrect(const nlohmann::json& result, const std::string& error_part) {
  EXPECT_EQ(result["status"], "incorrect");
  EXPECT_FALSE(result["correctness"]["passed"].get<bool>());
  EXPECT_NE(result["error"].get<std::string>().find(error_part), std::string::npos)
      << result["error"];
}

TEST(Export, WritesInputsOracleAndManifest) {
  const fs::path dir = exported("12p", "export_12p");
  std::ifstream manifest_file(dir / "workload.json");
  const auto manifest = nlohmann::json::parse(manifest_file);
  EXPECT_EQ(manifest["id"], "12p");
  EXPECT_EQ(manifest["name"], "12p_RMSNorm");
  EXPECT_EQ(manifest["size"], "smoke");
  EXPECT_EQ(manifest["seed"], kSeed);
  EXPECT_EQ(manifest["input_order"], nlohmann::json({"x", "scale"}));
  EXPECT_EQ(manifest["inputs"][0]["dtype"], "bf16");
  EXPECT_EQ(manifest["inputs"][0]["npy_dtype"], "<f4");
  EXPECT_EQ(manifest["inputs"][0]["shape"], nlohmann::json(kRmsShape));
  EXPECT_EQ(manifest["outputs"][0]["name"], "out");
  EXPECT_EQ(manifest["params"]["epsilon"], 1e-5);
  EXPECT_EQ(manifest["tolerance"]["atol"], 1e-2);
  for (const char* key : {"rule", "flops", "kbench_commit"})
    EXPECT_TRUE(manifest.contains(key)) << key;

  // bf16 inputs arrive as float32 arrays holding exactly bf16 values.
  const NpyArray x = read_npy(dir / "x.npy");
  EXPECT_EQ(x.shape, kRmsShape);
  for (float v : floats_of(x)) ASSERT_EQ(round_to_bf16(v), v);
  std::vector<std::int64_t> shape;
  EXPECT_EQ(oracle(dir, "out", &shape).size(), 2u * 37 * 61);
  EXPECT_EQ(shape, kRmsShape);
}

// The original's configuration travels with the inputs: every config key at this size, and the
// term magnitudes where the rule uses them (21k sums rounded GEMM outputs).
TEST(Export, WritesTheOriginalsConfigAndTermMagnitudes) {
  const fs::path dir = exported("21k", "export_21k_config");
  std::ifstream manifest_file(dir / "workload.json");
  const auto manifest = nlohmann::json::parse(manifest_file);
  EXPECT_EQ(
      manifest["config"],
      nlohmann::json(
          {{"batch_size", 29}, {"input_size", 53}, {"hidden_size", 47}, {"scaling_factor", 1.5}}));
  EXPECT_FALSE(manifest.contains("scenario_constants"));
  EXPECT_EQ(manifest["tolerance"]["term_rtol"], 0x1p-8);
  EXPECT_EQ(manifest["outputs"][0]["term_magnitude_file"], "oracle/out.term_magnitude.npy");
  const NpyArray magnitude = read_npy(dir / "oracle" / "out.term_magnitude.npy");
  const std::vector<float> out = oracle(dir, "out");
  ASSERT_EQ(floats_of(magnitude).size(), out.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    EXPECT_GE(floats_of(magnitude)[i], std::fabs(out[i]) * (1 - 1e-6)) << i;  // sum|t| >= |sum t|

  const fs::path paged = exported("7p", "export_7p_config");
  std::ifstream paged_file(paged / "workload.json");
  const auto paged_manifest = nlohmann::json::parse(paged_file);
  EXPECT_EQ(paged_manifest["scenario_constants"]["ACTIVE_Q_LENS"],
            nlohmann::json({1, 1, 1, 19, 23}));
  EXPECT_EQ(paged_manifest["config"]["max_num_batched_tokens"], 61);
}

TEST(Export, SameSeedSameFilesAndIntInputsStayInt) {
  const fs::path a = exported("13p", "export_13p_a"), b = exported("13p", "export_13p_b");
  const NpyArray labels = read_npy(a / "labels.npy");
  EXPECT_EQ(labels.type, NpyType::kI32);
  for (const char* file : {"hidden.npy", "weight.npy", "labels.npy", "oracle/loss.npy"})
    EXPECT_EQ(read_npy(a / file).data, read_npy(b / file).data) << file;
  EXPECT_TRUE(read_npy(a / "oracle/loss.npy").shape.empty()) << "a scalar output is a 0-d array";
}

TEST(Export, RefusesToOverwriteWithoutForce) {
  const fs::path dir = exported("8p", "export_force");
  const std::string args = "export --workload 8p --size smoke --seed 1 --out " + dir.string();
  EXPECT_EQ(run_kbench(args).exit_code, 2);
  EXPECT_EQ(run_kbench(args + " --force").exit_code, 0);
}

TEST(Export, DrawsAndPrintsAFreshSeedByDefault) {
  const fs::path dir = fresh_dir("export_fresh_seed");
  const CliRun run = run_kbench("export --workload 8p --size smoke --out " + dir.string());
  ASSERT_EQ(run.exit_code, 0);
  std::ifstream manifest_file(dir / "workload.json");
  const auto seed = nlohmann::json::parse(manifest_file)["seed"].get<std::uint64_t>();
  EXPECT_NE(run.out.find("--seed " + std::to_string(seed)), std::string::npos) << run.out;
}

TEST(Check, TheExportedOracleIsCorrect) {
  for (const std::string workload : {"12p", "8p"}) {
    const fs::path dir = exported(workload, "oracle_" + workload);
    const auto result = check_json(workload, dir / "oracle");
    EXPECT_EQ(result["status"], "correct") << result["error"];
    EXPECT_EQ(result["kind"], "check");
    EXPECT_EQ(result["error"], "");
    EXPECT_TRUE(result["correctness"]["passed"].get<bool>());
    EXPECT_EQ(result["correctness"]["trials"], 1);
    EXPECT_EQ(result["correctness"]["seeds"], nlohmann::json({kSeed}));
    EXPECT_EQ(result["correctness"]["max_abs_err"], 0.0);
    EXPECT_TRUE(result["candidate"].is_null());
    EXPECT_TRUE(result["baseline"].is_null());
  }
}

TEST(Check, TakesTheSeedFromTheManifestAndAnotherSeedFails) {
  const fs::path dir = exported("12p", "manifest_seed");
  fs::copy_file(dir / "oracle" / "out.npy", dir / "out.npy");
  EXPECT_EQ(check_json("12p", dir, "")["status"], "correct");
  expect_incorrect(check_json("12p", dir, "--seed 7"), "wrong result for seed 7: out[");
}

// Without --seed and without a manifest for this workload and size, the usage error says which of
// the three is off, so the user knows what to give.
TEST(Check, WithoutASeedTheErrorSaysWhatTheManifestDoesNotMatch) {
  const fs::path dir = exported("12p", "manifest_mismatch");
  const auto expect_usage_error = [&](const std::string& args, const std::string& reason) {
    const CliRun run = kbench::testing::run_kbench_stderr("check --no-record " + args);
    EXPECT_EQ(run.exit_code, 2) << run.out;
    EXPECT_NE(run.out.find("give --seed N"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find(reason), std::string::npos) << run.out;
  };
  expect_usage_error("-w 12p --outputs " + dir.string(),
                     "workload.json was written at --size smoke, not cpu");
  expect_usage_error("-w 8p --size smoke --outputs " + dir.string(),
                     "workload.json was written for 12p_RMSNorm, not 8p_GEMM");
  const fs::path empty = fresh_dir("manifest_missing");
  expect_usage_error("-w 12p --size smoke --outputs " + empty.string(),
                     "workload.json cannot be read");
  std::ofstream(empty / "workload.json") << "[1";
  expect_usage_error("-w 12p --size smoke --outputs " + empty.string(),
                     "workload.json is not a manifest kbench export wrote");
}

TEST(Check, ZerosAreIncorrect) {
  const std::vector<float> zeros(2 * 37 * 61, 0.f);
  const fs::path dir = submission("zeros", "out.npy", NpyType::kF32, kRmsShape, zeros.data());
  const auto result = check_json("12p", dir);
  expect_incorrect(result, "wrong result for seed " + std::to_string(kSeed));
  EXPECT_GT(result["correctness"]["max_abs_err"].get<double>(), 0.1);
  EXPECT_NE(result["correctness"]["detail"], "");
}

TEST(Check, NanWhereTheOracleIsFiniteIsIncorrect) {
  const fs::path dir = exported("12p", "nan");
  std::vector<float> values = oracle(dir, "out");
  values[100] = std::numeric_limits<float>::quiet_NaN();
  write_npy(dir / "out.npy", NpyType::kF32, kRmsShape, values.data());
  expect_incorrect(check_json("12p", dir), "out[100] = nan where the oracle has");
}

TEST(Check, AWrongShapeIsIncorrect) {
  const fs::path dir = exported("12p", "shape");
  const std::vector<float> values = oracle(dir, "out");
  write_npy(dir / "out.npy", NpyType::kF32, std::vector<std::int64_t>{74, 61}, values.data());
  expect_incorrect(check_json("12p", dir), "has shape (74, 61) but out has shape (2, 37, 61)");
}

TEST(Check, ATruncatedOrForeignFileCannotBeRead) {
  const fs::path dir = exported("12p", "truncated");
  fs::copy_file(dir / "oracle" / "out.npy", dir / "out.npy");
  fs::resize_file(dir / "out.npy", fs::file_size(dir / "out.npy") - 10);
  expect_incorrect(check_json("12p", dir),
                   "cannot read " + (dir / "out.npy").string() + ": truncated");
  std::ofstream(dir / "out.npy", std::ios::trunc) << "out,1.0,2.0\n";
  expect_incorrect(check_json("12p", dir), "not a .npy file");
}

TEST(Check, ASparseFileDeclaringMoreDataThanTheOutputHoldsIsRefusedUnread) {
  // 10 GB long, a few KB on disk: before the bound, check allocated and read all of it (71 s,
  // 9.8 GB resident) to say the shape was wrong, and a longer one ended in std::bad_alloc.
  const fs::path dir = exported("12p", "sparse");
  const std::vector<std::int64_t> shape = {50000, 50000};
  const std::string header = npy_header(NpyType::kF32, shape);
  std::ofstream(dir / "out.npy", std::ios::binary) << header;
  fs::resize_file(dir / "out.npy", header.size() + 50000ull * 50000 * 4);
  expect_incorrect(check_json("12p", dir),
                   "declares float32 (50000, 50000), 10000000000 bytes of data, where at most "
                   "18056 are expected");  // 2 x 37 x 61 f32
}

TEST(Check, AMissingOutputIsIncorrect) {
  expect_incorrect(check_json("12p", fresh_dir("missing")), "no such file (write out.npy");
}

TEST(Check, AcceptsFloat16) {
  const fs::path dir = exported("8p", "float16");
  std::vector<std::int64_t> shape;
  std::vector<f16_t> halves;
  for (float v : oracle(dir, "out", &shape)) halves.push_back(f32_to_f16(v));
  write_npy(dir / "out.npy", NpyType::kF16, shape, halves.data());
  EXPECT_EQ(check_json("8p", dir)["status"], "correct");
}

TEST(Check, AcceptsBfloat16BySidecarOrFileName) {
  const fs::path dir = exported("12p", "bfloat16");
  std::vector<bf16_t> bits;
  for (float v : oracle(dir, "out")) bits.push_back(f32_to_bf16(v));
  // uint16 alone is ambiguous: without a sidecar it is not read as bfloat16.
  write_npy(dir / "out.npy", NpyType::kU16, kRmsShape, bits.data());
  expect_incorrect(check_json("12p", dir), "only with a sidecar out.dtype containing 'bfloat16'");
  std::ofstream(dir / "out.dtype") << "float8\n";
  expect_incorrect(check_json("12p", dir), "the only dtype a sidecar may name is bfloat16");
  std::ofstream(dir / "out.dtype", std::ios::trunc) << "bfloat16\n";
  const auto by_sidecar = check_json("12p", dir);
  EXPECT_EQ(by_sidecar["status"], "correct") << by_sidecar["error"];
  EXPECT_GT(by_sidecar["correctness"]["max_abs_err"].get<double>(), 0)
      << "bf16 rounding is visible";

  fs::remove(dir / "out.npy");
  fs::remove(dir / "out.dtype");
  write_npy(dir / "out.bf16.npy", NpyType::kU16, kRmsShape, bits.data());
  EXPECT_EQ(check_json("12p", dir)["status"], "correct");
  const std::vector<float> values = oracle(dir, "out");
  write_npy(dir / "out.bf16.npy", NpyType::kF32, kRmsShape, values.data());
  expect_incorrect(check_json("12p", dir), "bfloat16 bits must be stored as uint16");
}

TEST(Check, AScalarOutputMayBeShapeOne) {
  const fs::path dir = exported("13p", "scalar");
  const std::vector<float> loss = oracle(dir, "loss");
  write_npy(dir / "loss.npy", NpyType::kF32, std::vector<std::int64_t>{1}, loss.data());
  EXPECT_EQ(check_json("13p", dir)["status"], "correct");
  write_npy(dir / "loss.npy", NpyType::kF32, std::vector<std::int64_t>{}, loss.data());
  EXPECT_EQ(check_json("13p", dir)["status"], "correct");
}

TEST(Check, UsageErrorsExitTwo) {
  const fs::path dir = fresh_dir("usage");
  EXPECT_EQ(run_kbench("check --workload nope --seed 1 --outputs " + dir.string()).exit_code, 2);
  EXPECT_EQ(
      run_kbench("check --workload 12p --seed 1 --outputs " + (dir / "absent").string()).exit_code,
      2);
  // No --seed and no manifest: there is no way to know which inputs the outputs belong to.
  EXPECT_EQ(run_kbench("check --workload 12p --no-record --outputs " + dir.string()).exit_code, 2);
}

TEST(Check, IsRecordedAndShownByResults) {
  const fs::path dir = exported("12p", "recorded");
  const std::string db = temp_db("interop_recorded");
  fs::remove(db);
  const CliRun check =
      run_kbench("check --workload 12p --size smoke --seed " + std::to_string(kSeed) +
                 " --outputs " + (dir / "oracle").string() + " --db " + db);
  ASSERT_EQ(check.exit_code, 0);
  EXPECT_NE(check.out.find("kind=check  ->  CORRECT"), std::string::npos) << check.out;
  const CliRun results = run_kbench("results --kind check --json --db " + db);
  ASSERT_EQ(results.exit_code, 0);
  const auto records = nlohmann::json::parse(results.out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["kind"], "check");
  EXPECT_EQ(records[0]["status"], "correct");
}

TEST(Check, ANumpyRmsNormIsCorrect) {
  if (std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0)
    GTEST_SKIP() << "/usr/bin/python3 with NumPy is missing (Debian package python3-numpy)";
  const fs::path dir = exported("12p", "numpy");
  // The worked example of docs/interop.md: RMSNorm in NumPy, with the spec's bf16 roundings.
  const std::string script = source_path("examples/12p_RMSNorm_numpy.py");
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + dir.string()).c_str()), 0);
  const auto result = check_json("12p", dir, "");
  EXPECT_EQ(result["status"], "correct") << result["error"];
  EXPECT_LT(result["correctness"]["rel_l2_err"].get<double>(), 1e-2);
}

}  // namespace
}  // namespace kbench::testing
