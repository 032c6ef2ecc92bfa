// `kbench export`: a workload's inputs and fp32 oracle as .npy files plus workload.json, for
// kernels written in other frameworks (see docs/interop.md).
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
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

Subcommand add_export_command(CLI::App& app) {
  auto export_options = std::make_shared<ExportOptions>();
  auto* export_cmd = app.add_subcommand(
      "export",
      "Write a workload's inputs and fp32 oracle outputs as .npy files, for kernels in other "
      "frameworks");
  add_workload_option(export_cmd, export_options->workload);
  add_size_option(export_cmd, export_options->size);
  add_seed_option(export_cmd, export_options->seed,
                  "Input seed (default: drawn fresh and printed)");
  export_cmd->add_option("--out,-o", export_options->out, "Directory to write (created if missing)")
      ->type_name("DIR")
      ->required();
  export_cmd->add_flag("--force", export_options->force,
                       "Overwrite the files of an earlier export");
  export_cmd->add_flag(
      "--bf16-program", export_options->bf16_program,
      "Also write the outputs of the workload's bf16 program (its emulation of the "
      "original's arithmetic) in DIR/" +
          std::string(kbench::kProgramDir));
  export_cmd->footer(
      std::string("Writes, in DIR:\n"
                  "  <input>.npy           each input (bf16 as float32 holding the bf16 values, "
                  "i32 as int32)\n"
                  "  ") +
      kbench::kOracleDir + "/<output>.npy   the fp32 oracle's outputs (float32)\n  " +
      kbench::kManifestFile +
      "         id, size, seed, shapes, dtypes, parameters, the original's config,\n"
      "                        input order, tolerances\n"
      "See docs/interop.md.");
  return {export_cmd, [export_options] { return export_command(*export_options); }};
}

}  // namespace kbench::cli
