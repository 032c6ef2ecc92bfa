// Interop with kernels written in other frameworks (JAX, Triton, PyTorch, NumPy): a workload's
// inputs and fp32 oracle exported as .npy files, and outputs computed elsewhere checked by the very
// rule `kbench eval` applies. docs/interop.md describes the files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/eval_result.h"
#include "workloads/workload.h"

namespace kbench {

// The manifest export writes beside the inputs: workload, size, seed, tensors, parameters, rule.
inline constexpr const char* kManifestFile = "workload.json";
// Export puts the oracle's outputs in this subdirectory, so checking the export directory itself
// before any output was written there finds nothing instead of passing on the oracle's own values.
inline constexpr const char* kOracleDir = "oracle";
// With --bf16-program, export puts the outputs of the workload's bf16 program here (f32 files of
// bf16 values): what a port of the original with the original's roundings should compute.
inline constexpr const char* kProgramDir = "bf16_program";
// The text a `<output>.dtype` sidecar holds to mark a uint16 file as bfloat16 bits.
inline constexpr const char* kBf16SidecarText = "bfloat16";

// A configuration (Problem::config or Problem::scenario) as a JSON object in its own key order,
// each value as the spec writes it: integers as integers, floats as floats, lists as arrays.
nlohmann::ordered_json config_json(const std::vector<ConfigEntry>& entries);

// How outputs computed elsewhere must be named and typed, as `kbench check --help` and error
// messages state it.
std::string output_naming_rules();

// Every file export_workload() writes into `dir` (inputs, oracle outputs, manifest), so a caller
// can refuse to overwrite them.
std::vector<std::filesystem::path> export_paths(const Problem& problem,
                                                const std::filesystem::path& dir);

// Draws the inputs from `seed` exactly as `kbench eval` does (input i from Philox stream i) and
// computes the fp32 oracle (the baseline with f32 outputs), then writes, creating `dir` if needed:
//   <dir>/<input>.npy         each input in call order: bf16 and f32 as '<f4' (bf16 values
//   exactly),
//                             i32 as '<i4'
//   <dir>/oracle/<output>.npy the oracle's outputs as '<f4'
//   <dir>/workload.json       the manifest, which is also returned
//   <dir>/bf16_program/<output>.npy  with `with_program`, the bf16 program's outputs as '<f4'
// Throws std::runtime_error (NpyError, filesystem_error) when a file cannot be written.
nlohmann::json export_workload(const Workload& workload, Size size, std::uint64_t seed,
                               const std::filesystem::path& dir, bool with_program = false);

// The seed recorded in `dir`/workload.json when that manifest exists and was written for the same
// workload and size; otherwise no seed and why not, in words that tell the user what to give
// (no manifest, another workload or size, unreadable).
struct ExportedSeed {
  std::optional<std::uint64_t> seed;
  std::string why_not;
};
ExportedSeed exported_seed(const std::filesystem::path& dir, const Workload& workload, Size size);

// Checks the outputs in `dir` (named by output_naming_rules()) against the fp32 oracle of the
// inputs drawn from `seed`, with check_outputs() and the workload's tolerance: an EvalResult of
// kind "check" with status kCorrect or kIncorrect, one correctness trial, and no timing. A missing,
// unreadable or malformed file, a wrong dtype or shape is kIncorrect with an error naming the file;
// the diagnostics list how each file was read. Throws only when kbench itself fails (the oracle).
EvalResult check_output_files(const Workload& workload, Size size, std::uint64_t seed,
                              const std::filesystem::path& dir);

}  // namespace kbench
