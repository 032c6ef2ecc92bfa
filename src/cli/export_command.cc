// `kbench export`: a workload's inputs and fp32 oracle as .npy files plus workload.json, for
// kernels written in other frameworks (see docs/interop.md).
#include <filesystem>
#include <iostream>
#include <random>

#include "cli/commands.h"
#include "cli/context.h"
#include "core/npy.h"
#include "harness/interop.h"

namespace kbench::cli {

int export_command(const ExportOptions& options) {
  namespace fs = std::filesystem;
  const Workload& w = workload_or_usage_error(options.workload);
  const Size size = size_or_usage_error(options.size);
  const fs::path dir = options.out;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UsageError("--out '" + options.out + "' exists and is not a directory");
  if (!options.force) {
    for (const fs::path& path : export_paths(w.problem(size), dir)) {
      if (fs::exists(path, ec))
        throw UsageError(path.string() +
                         " already exists (an earlier export?); pass --force to overwrite");
    }
  }
  // A fresh seed is 32 bits: short enough to type into `kbench check --seed`.
  const std::uint64_t seed = options.seed.value_or(std::random_device{}());
  const nlohmann::json manifest = export_workload(w, size, seed, dir, options.bf16_program);

  std::cout << "exported " << w.name << " size=" << size_name(size) << " seed=" << seed << " to "
            << dir.string() << "\n";
  for (const auto& in : manifest["inputs"]) {
    std::cout << "  input    " << (dir / in["file"].get<std::string>()).string() << "  "
              << in["npy_dtype"].get<std::string>() << " "
              << npy_shape_string(in["shape"].get<std::vector<std::int64_t>>()) << "  ("
              << in["dtype"].get<std::string>() << " values)\n";
  }
  for (const auto& out : manifest["outputs"]) {
    const std::string shape = npy_shape_string(out["shape"].get<std::vector<std::int64_t>>());
    std::cout << "  oracle   " << (dir / out["oracle_file"].get<std::string>()).string() << "  <f4 "
              << shape << "\n";
    if (out.contains("term_magnitude_file"))
      std::cout << "  bound    " << (dir / out["term_magnitude_file"].get<std::string>()).string()
                << "  <f4 " << shape << "  (term magnitudes)\n";
    if (options.bf16_program && w.bf16_program)
      std::cout << "  program  "
                << (dir / kProgramDir / (out["name"].get<std::string>() + ".npy")).string()
                << "  <f4 " << shape << "  (bf16 program)\n";
  }
  std::cout << "  manifest " << (dir / kManifestFile).string() << "\n"
            << "Write the outputs as " << (dir / "<output>.npy").string() << ", then run:\n"
            << "  kbench check --workload " << w.name << " --size " << size_name(size) << " --seed "
            << seed << " --outputs " << dir.string() << "\n";
  return 0;
}

}  // namespace kbench::cli
