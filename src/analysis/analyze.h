// `kbench analyze`: where a kernel's cycles go, read off its machine code. Each innermost loop of
// the compiled candidate, with its source lines, is simulated by llvm-mca on a model of this CPU:
// cycles per iteration and the resource, dependency chain or front end that bounds them, and the
// warnings a kernel writer acts on. Static: nothing of the candidate runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/asm_loops.h"
#include "analysis/mca.h"

namespace kbench::analysis {

struct LoopReport {
  AsmLoop loop;
  LoopCost cost;
  std::vector<std::string> warnings;
};

struct Analysis {
  std::string model;         // llvm-mca's -mcpu
  std::string model_reason;  // why that model
  std::vector<LoopReport> loops;
  std::string loops_error;  // why no loop could be simulated, if none could
};

// llvm-mca's model of this CPU, from its vendor and ISA extensions (the VM's reported model name
// can be masked); `reason` says which.
std::string model_for_this_cpu(std::string* reason);

// Every innermost loop of `assembly` simulated on `model`.
Analysis analyze_assembly(std::string_view assembly, const std::string& model,
                          const std::string& model_reason);

// "8p_GEMM.cpp:40-44,52 blocked_gemm.h:118": a loop's lines, by file, runs of lines joined; the
// system's headers (intrinsics, the standard library) left out.
std::string lines_text(const std::vector<SourceLine>& lines);

nlohmann::json to_json(const Analysis& analysis);
std::string to_text(const Analysis& analysis);

}  // namespace kbench::analysis
