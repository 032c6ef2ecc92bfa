// `kbench export` and `kbench check` below the command line: .npy files in and out of a problem
// instance, judged by the shared correctness rule.
#include "harness/interop.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <variant>

#include "core/bf16.h"
#include "core/environment.h"
#include "core/f16.h"
#include "core/npy.h"
#include "core/text.h"
#include "core/timer.h"
#include "harness/build_info.h"
#include "harness/checker.h"
#include "harness/evaluator.h"
#include "harness/problem_instance.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

// Export and check compute the oracle alike, with one thread, so the exported oracle files hold
// the very values check compares against.
constexpr int kOracleThreads = 1;

// A submitted output that cannot be judged by value: its what() is the verdict's error line.
class Rejection : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

fs::path npy_path(const fs::path& dir, const std::string& tensor) {
  return dir / (tensor + ".npy");
}
fs::path bf16_path(const fs::path& dir, const std::string& tensor) {
  return dir / (tensor + ".bf16.npy");
}
fs::path sidecar_path(const fs::path& dir, const std::string& tensor) {
  return dir / (tensor + ".dtype");
}
fs::path oracle_path(const fs::path& dir, const std::string& tensor) {
  return npy_path(dir / kOracleDir, tensor);
}
fs::path magnitude_path(const fs::path& dir, const std::string& tensor) {
  return npy_path(dir / kOracleDir, tensor + ".term_magnitude");
}

// bf16 is written as float32 holding the same values (NumPy has no bfloat16); f32, i32 as they are.
NpyType export_type(kb_dtype dtype) {
  return dtype == KB_I32 ? NpyType::kI32 : NpyType::kF32;
}

void write_tensor(const fs::path& path, const HostTensor& tensor) {
  const TensorSpec& spec = tensor.spec();
  if (spec.dtype != KB_BF16) {
    write_npy(path, export_type(spec.dtype), spec.shape, tensor.data());
    return;
  }
  std::vector<float> values(static_cast<std::size_t>(spec.numel()));
  convert_bf16_to_f32(tensor.as<bf16_t>(), values.data(), values.size());
  write_npy(path, NpyType::kF32, spec.shape, values.data());
}

nlohmann::json shape_json(const TensorSpec& spec) {
  return nlohmann::json(spec.shape);
}

nlohmann::json manifest(const Workload& w, Size size, std::uint64_t seed, const Problem& problem) {
  nlohmann::json inputs = nlohmann::json::array(), order = nlohmann::json::array();
  for (const InputSpec& in : problem.inputs) {
    const TensorSpec& t = in.tensor;
    inputs.push_back({{"name", t.name},
                      {"dtype", dtype_name(t.dtype)},
                      {"npy_dtype", npy_descr(export_type(t.dtype))},
                      {"shape", shape_json(t)},
                      {"file", npy_path("", t.name).string()}});
    order.push_back(t.name);
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (const TensorSpec& t : problem.outputs) {
    outputs.push_back({{"name", t.name},
                       {"dtype", dtype_name(t.dtype)},
                       {"shape", shape_json(t)},
                       {"oracle_file", oracle_path("", t.name).string()}});
    if (w.term_magnitude != nullptr)
      outputs.back()["term_magnitude_file"] = magnitude_path("", t.name).string();
  }
  nlohmann::json params = nlohmann::json::object();
  for (const NamedParam& p : problem.params) params[p.name] = p.value;
  nlohmann::json extra = nlohmann::json::object();
  // The original program's constants at this size, so that it runs unmodified on these inputs.
  extra["config"] = config_json(problem.config);
  if (!problem.scenario.empty()) extra["scenario_constants"] = config_json(problem.scenario);
  nlohmann::json json = {
      {"id", w.id()},
      {"name", w.name},
      {"summary", w.summary},
      {"size", size_name(size)},
      {"seed", seed},
      {"inputs", std::move(inputs)},
      {"input_order", std::move(order)},
      {"outputs", std::move(outputs)},
      {"params", std::move(params)},
      {"tolerance",
       {{"atol", w.tolerance.atol},
        {"rtol", w.tolerance.rtol},
        {"max_rel_l2", w.tolerance.max_rel_l2},
        {"term_rtol", w.tolerance.term_rtol}}},
      {"rule", rule_text(w.tolerance)},
      {"flops", problem.flops},
      {"kbench_commit", kbench_commit()},
  };
  json.update(extra);
  return json;
}

// What a `<output>.dtype` sidecar says, whitespace trimmed; empty when there is none.
std::string sidecar_text(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw Rejection("cannot read " + path.string() + ": " + std::strerror(errno));
  return trim(text.str());
}

// Shapes agree exactly; a scalar output may also come as a 1-element 1-d array, as frameworks that
// cannot save 0-d arrays write it.
bool shape_matches(const std::vector<std::int64_t>& got, const std::vector<std::int64_t>& want) {
  return got == want || (want.empty() && got == std::vector<std::int64_t>{1});
}

template <typename T>
std::vector<T> elements(const NpyArray& array) {
  std::vector<T> values(array.data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

// The output `spec` as submitted in `dir`, widened to f32, following output_naming_rules(). Appends
// a line saying which file it read as what to `log`.
std::vector<float> load_output(const TensorSpec& spec, const fs::path& dir, std::string& log) {
  const fs::path plain = npy_path(dir, spec.name), bf16_file = bf16_path(dir, spec.name);
  const fs::path sidecar = sidecar_path(dir, spec.name);
  std::error_code ec;
  const bool has_plain = fs::exists(plain, ec), has_bf16 = fs::exists(bf16_file, ec);
  if (has_plain && has_bf16) {
    throw Rejection("cannot read " + plain.string() + ": " + bf16_file.filename().string() +
                    " exists too; keep one file per output");
  }
  if (!has_plain && !has_bf16) {
    throw Rejection("cannot read " + plain.string() + ": no such file (write " + spec.name +
                    ".npy as float32 or float16, or " + spec.name +
                    ".bf16.npy as bfloat16 bits in uint16)");
  }
  const fs::path path = has_bf16 ? bf16_file : plain;
  // No accepted dtype is wider than f32; a scalar may come as shape (1,).
  const std::uint64_t most_bytes =
      static_cast<std::uint64_t>(std::max<std::int64_t>(spec.numel(), 1)) *
      npy_type_size(NpyType::kF32);
  NpyArray array;
  try {
    array = read_npy(path, most_bytes);
  } catch (const NpyError& e) {
    throw Rejection("cannot read " + path.string() + ": " + e.what());
  }
  const std::string declared = has_bf16 ? kBf16SidecarText : sidecar_text(sidecar);
  if (!declared.empty() && declared != kBf16SidecarText) {
    throw Rejection("cannot read " + sidecar.string() + ": it says '" + declared.substr(0, 40) +
                    "', but the only dtype a sidecar may name is " + kBf16SidecarText);
  }
  const bool bf16 = !declared.empty();
  const char* type_name = bf16 ? "bfloat16" : npy_type_name(array.type);
  // The file's own dtype must agree with what its name or sidecar declare.
  std::string why;
  if (bf16 && array.type != NpyType::kU16) {
    why =
        std::string("bfloat16 bits must be stored as uint16 ('<u2'), not ") + npy_descr(array.type);
  } else if (!bf16 && array.type == NpyType::kU16) {
    why = "uint16 data is read as bfloat16 bits only with a sidecar " +
          sidecar.filename().string() + " containing '" + kBf16SidecarText +
          "' or when the file is named " + bf16_file.filename().string();
  } else if (array.type == NpyType::kI32) {
    why = "an output must be float32, float16 or bfloat16, not int32";
  }
  if (!why.empty()) throw Rejection("cannot read " + path.string() + ": " + why);
  if (!shape_matches(array.shape, spec.shape)) {
    throw Rejection(path.string() + " has shape " + npy_shape_string(array.shape) + " but " +
                    spec.name + " has shape " + npy_shape_string(spec.shape));
  }
  log += spec.name + ": read " + path.string() + " as " + type_name + " " +
         npy_shape_string(array.shape) + "\n";
  switch (array.type) {
    case NpyType::kF32:
      return elements<float>(array);
    case NpyType::kF16: {
      const std::vector<f16_t> halves = elements<f16_t>(array);
      std::vector<float> values(halves.size());
      std::transform(halves.begin(), halves.end(), values.begin(), f16_to_f32);
      return values;
    }
    case NpyType::kU16: {
      const std::vector<bf16_t> bits = elements<bf16_t>(array);
      std::vector<float> values(bits.size());
      convert_bf16_to_f32(bits.data(), values.data(), bits.size());
      return values;
    }
    case NpyType::kI32:
      break;
  }
  throw std::logic_error("unreachable: int32 output rejected above");
}

}  // namespace

nlohmann::ordered_json config_json(const std::vector<ConfigEntry>& entries) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const ConfigEntry& e : entries)
    std::visit([&](const auto& value) { json[e.name] = value; }, e.value);
  return json;
}

std::string output_naming_rules() {
  const std::string bf16 = kBf16SidecarText;
  return "Output files, for each output OUT of the workload (DIR is --outputs):\n"
         "  DIR/OUT.npy        float32 ('<f4') or float16 ('<f2')\n"
         "  DIR/OUT.bf16.npy   bfloat16 bits as uint16 ('<u2')\n"
         "  DIR/OUT.npy        uint16 bfloat16 bits, beside a sidecar DIR/OUT.dtype holding '" +
         bf16 +
         "'\n"
         "Shapes must equal the workload's (a scalar may also be (1,)); C order, little-endian.";
}

std::vector<fs::path> export_paths(const Problem& problem, const fs::path& dir) {
  std::vector<fs::path> paths;
  for (const InputSpec& in : problem.inputs) paths.push_back(npy_path(dir, in.tensor.name));
  for (const TensorSpec& out : problem.outputs) paths.push_back(oracle_path(dir, out.name));
  paths.push_back(dir / kManifestFile);
  return paths;
}

nlohmann::json export_workload(const Workload& workload, Size size, std::uint64_t seed,
                               const fs::path& dir, bool with_program) {
  ProblemInstance instance(workload, size);
  instance.generate(seed);
  std::vector<HostTensor> oracle = instance.run_trusted(workload.baseline, kOracleThreads, KB_F32);
  fs::create_directories(dir / kOracleDir);
  const Problem& problem = instance.problem();
  for (std::size_t i = 0; i < problem.inputs.size(); ++i)
    write_tensor(npy_path(dir, problem.inputs[i].tensor.name), instance.inputs()[i]);
  for (const HostTensor& out : oracle) write_tensor(oracle_path(dir, out.spec().name), out);
  for (const HostTensor& m : instance.term_magnitudes(kOracleThreads))
    write_tensor(magnitude_path(dir, m.spec().name), m);
  if (with_program && workload.bf16_program) {
    fs::create_directories(dir / kProgramDir);
    for (const HostTensor& out :
         instance.run_trusted(workload.bf16_program, kOracleThreads, KB_BF16))
      write_tensor(npy_path(dir / kProgramDir, out.spec().name), out);
  }
  nlohmann::json json = manifest(workload, size, seed, problem);
  std::ofstream file(dir / kManifestFile);
  file << json.dump(2) << "\n";
  if (!file.flush())
    throw std::runtime_error("cannot write " + (dir / kManifestFile).string() + ": " +
                             std::strerror(errno));
  return json;
}

ExportedSeed exported_seed(const fs::path& dir, const Workload& workload, Size size) {
  const fs::path manifest = dir / kManifestFile;
  std::ifstream in(manifest);
  if (!in) return {std::nullopt, manifest.string() + " cannot be read"};
  try {
    const nlohmann::json json = nlohmann::json::parse(in);
    const std::string name = json.at("name"), exported_size = json.at("size");
    if (name != workload.name)
      return {std::nullopt, manifest.string() + " was written for " + name + ", not " +
                                std::string(workload.name)};
    if (exported_size != size_name(size))
      return {std::nullopt, manifest.string() + " was written at --size " + exported_size +
                                ", not " + size_name(size)};
    const nlohmann::json& seed = json.at("seed");
    if (seed.is_number_unsigned()) return {seed.get<std::uint64_t>(), ""};
  } catch (const nlohmann::json::exception&) {
    // Not JSON, or a field missing or of another type: said below.
  }
  return {std::nullopt, manifest.string() + " is not a manifest kbench export wrote"};
}

EvalResult check_output_files(const Workload& workload, Size size, std::uint64_t seed,
                              const fs::path& dir) {
  const double start = now_seconds();
  EvalResult r;
  r.kind = "check";
  r.workload = std::string(workload.name);
  r.size = size_name(size);
  r.threads = kOracleThreads;
  r.warmup = 0;
  r.created_at = utc_now_iso8601();
  r.candidate_path = dir.string();
  r.correctness.seeds.push_back(seed);

  ProblemInstance instance(workload, size);
  std::vector<std::vector<float>> outputs;
  try {
    // Files first: a bad submission is reported before the oracle's possibly long computation.
    for (const TensorSpec& spec : instance.problem().outputs)
      outputs.push_back(load_output(spec, dir, r.diagnostics));
  } catch (const Rejection& e) {
    r.status = Status::kIncorrect;
    r.error = e.what();
    r.wall_s = now_seconds() - start;
    return r;
  }
  instance.generate(seed);
  std::vector<HostTensor> oracle_tensors =
      instance.run_trusted(workload.baseline, kOracleThreads, KB_F32);
  std::vector<HostTensor> magnitudes = instance.term_magnitudes(kOracleThreads);
  const CheckResult c = check_outputs(instance.problem(), outputs, to_f32(oracle_tensors),
                                      workload.tolerance, to_f32(magnitudes));
  r.correctness.trials = 1;  // compared: a file of the wrong shape above measured no error
  merge_check(r.correctness, c);
  r.correctness.passed = c.passed;
  r.status = c.passed ? Status::kCorrect : Status::kIncorrect;
  // The same wording as `kbench eval`'s verdict on a wrong result.
  if (!c.passed) r.error = "wrong result for seed " + std::to_string(seed) + ": " + c.detail;
  r.wall_s = now_seconds() - start;
  return r;
}

}  // namespace kbench
