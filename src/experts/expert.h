// The expert tier: hand-tuned candidate sources (experts/<workload>.cpp) whose tunable parameters
// are macros declared in the source itself, one `// tune:` line each, and the configurations of
// that declared space.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/workload.h"

namespace kbench::experts {

// One tunable, from a line of the form
//   // tune: KB_MC = 48 96 192 (default 96)
// followed in the source by `#ifndef KB_MC / #define KB_MC 96 / #endif`.
struct TunableParam {
  std::string name;
  std::vector<long long> values;  // the declared space, in declared order
  long long default_value = 0;
};

// A point of the space: each parameter's value. Constraints between parameters are the source's
// static_asserts: a configuration that violates one fails to compile.
using Config = std::map<std::string, long long>;

struct ExpertKernel {
  std::string workload;  // full name, "8p_GEMM"
  std::string path;      // the source file
  std::string source;    // self-contained: its includes of experts/ headers expanded in place
  std::vector<TunableParam> params;
};

// $KBENCH_EXPERTS_DIR when set and non-empty, else the checkout's experts/ (compiled in).
std::string default_experts_dir();

// The `// tune:` declarations of `source`. Throws std::runtime_error naming `path` and the line
// for a malformed declaration, a repeated name, an empty space or a default outside it.
std::vector<TunableParam> parse_tunables(const std::string& source, const std::string& path);

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
// Every point of the space (the cartesian product), the default first.
std::vector<Config> full_grid(const ExpertKernel& expert);

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
