// The expert tier: hand-tuned candidate sources (experts/<workload>.cpp) whose tunable parameters
// are macros declared in the source itself, one `// tune:` line each, and the configurations of
// that declared space.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/workload.h"

namespace kbench::experts {

// One tunable, from a line of the form
//   // tune: KB_MC = 48 96 192 (default 96)
// followed in the source by `#ifndef KB_MC / #define KB_MC 96 / #endif`. An expert with several
// instruction-set paths (chosen at run time) names them once,
//   // tune paths: amx avx512 avx2 scalar
// and a tunable read by some of them only says which:
//   // tune: KB_MR = 6 8 12 (default 6) [avx512]
// so a machine is tuned over the tunables of the path it takes, the others held at their defaults
// (on an AMX machine 8p's space is 8 points, not 1,296).
struct TunableParam {
  std::string name;
  std::vector<long long> values;  // the declared space, in declared order
  long long default_value = 0;
  std::vector<std::string> paths;  // the paths that read it; empty: every path
};

// The instruction-set paths an expert may declare, least capable first.
inline constexpr const char* kExpertPaths[] = {"scalar", "avx2", "avx512", "amx"};

// A point of the space: each parameter's value. Constraints between parameters are the source's
// static_asserts: a configuration that violates one fails to compile.
using Config = std::map<std::string, long long>;

struct ExpertKernel {
  std::string workload;  // full name, "8p_GEMM"
  std::string path;      // the source file
  std::string source;    // self-contained: its includes of experts/ headers expanded in place
  std::vector<TunableParam> params;
  std::vector<std::string> paths;  // its `// tune paths:` line; empty when it declares none
};

// $KBENCH_EXPERTS_DIR when set and non-empty, else the checkout's experts/ (compiled in).
std::string default_experts_dir();

// The `// tune:` declarations of `source`. Throws std::runtime_error naming `path` and the line
// for a malformed declaration, a repeated name, an empty space or a default outside it.
std::vector<TunableParam> parse_tunables(const std::string& source, const std::string& path);
// The `// tune paths:` line of `source` (empty without one). Throws std::runtime_error naming
// `path` and the line for an unknown or repeated path or a second such line, and `path` and the
// tunable for a [paths] tag naming a path the line does not declare (or with no such line).
std::vector<std::string> parse_paths(const std::string& source, const std::string& path,
                                     const std::vector<TunableParam>& params);

// Whether this machine runs an expert's `path` ("amx" needs AMX-TILE, AMX-BF16, AVX-512 F/BW/VL/DQ
// and the kernel's grant of the tile state; "avx512" F/BW/VL/DQ; "avx2" AVX2 and FMA; "scalar"
// always), as experts/include/isa.h decides at run time.
bool machine_runs_path(const std::string& path);
// The path `expert` takes here: the most capable it declares that this machine runs; "" when it
// declares none.
std::string path_on_this_machine(const ExpertKernel& expert);

// Where the workload's expert is, whether or not it exists: experts_dir/<workload name>.cpp.
std::filesystem::path expert_source_path(const std::string& experts_dir, const Workload& workload);

// experts/<workload name>.cpp when it exists, parsed; nullopt when the workload has no expert.
// Experts share code through headers in the experts directory: each `#include "..."` of one is
// replaced by its text (once per header, with #line markers), since a candidate is compiled as
// one file. Throws std::runtime_error when the file or a header cannot be read, a quoted include
// names a file outside the directory, or the declarations do not parse.
std::optional<ExpertKernel> find_expert(const std::string& experts_dir, const Workload& workload);

Config default_config(const ExpertKernel& expert);
// Throws std::invalid_argument naming the parameter when `config` sets one the expert does not
// declare, misses one, or holds a value outside its space.
void validate_config(const ExpertKernel& expert, const Config& config);
// Every point of the space (the cartesian product), the default first. With a `path`, the
// tunables that path does not read take only their defaults.
std::vector<Config> full_grid(const ExpertKernel& expert, const std::string& path = "");

// The source compiled for `config`: one #define per parameter ahead of the expert's own text, so
// the expert's #ifndef defaults give way. The result is an ordinary candidate.
std::string configured_source(const ExpertKernel& expert, const Config& config);

// configured_source written whole to `cache_dir`/experts/<its sha256>.cpp; returns the path.
std::string write_configured_source(const ExpertKernel& expert, const Config& config,
                                    const std::string& cache_dir);
// "KB_KC=256 KB_MC=96": the parameters in name order, for tables and keys.
std::string config_text(const Config& config);

// How records name an expert evaluated at `config`: "experts/8p_GEMM.cpp [KB_KC=256 ...]".
std::string point_name(const ExpertKernel& expert, const Config& config);

}  // namespace kbench::experts
