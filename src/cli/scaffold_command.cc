// `kbench scaffold ID` (or `-w ID`): a candidate to start from (a naive, correct kernel where the
// workload has one, else the bare entry point), with the workload's operator, tensors and the exact
// build command in its header.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "core/text.h"
#include "harness/compiler.h"
#include "workloads/spec_text.h"

namespace kbench::cli {

int scaffold_command(const ScaffoldOptions& options) {
  const Workload& w = workload_or_usage_error(options.workload);
  std::cout << "// kbench candidate for " << w.name << ": " << w.summary << "\n"
            << "// Evaluate: kbench eval --workload " << w.name << " --candidate THIS_FILE.cpp\n"
            << "// Built by kbench as: " << candidate_command_line() << "\n";
  // The operator as the reference's file states it, each line a comment.
  if (const std::string_view spec = spec_text(w); !spec.empty()) {
    std::cout << "//\n";
    for (const std::string_view line : split_lines(spec))
      std::cout << (line.empty() ? "//" : "// ") << line << "\n";
    std::cout << "//\n";
  }
  std::cout << "// Tensors (call order; read shapes from the tensors, they differ per size):\n";
  for (Size size : {Size::kSmoke, Size::kCpu, Size::kFull}) {
    const Problem p = w.problem(size);
    std::cout << "//   " << size_name(size) << ":";
    for (const InputSpec& in : p.inputs)
      std::cout << " in " << in.tensor.name << " " << dtype_name(in.tensor.dtype)
                << in.tensor.shape_string();
    for (const TensorSpec& out : p.outputs)
      std::cout << "; out " << out.name << " " << dtype_name(out.dtype) << out.shape_string();
    std::cout << "\n";
  }
  const Problem cpu = w.problem(Size::kCpu);
  if (!cpu.params.empty()) {
    std::cout << "// Parameters (kb_param_or(cfg, name, default)):";
    for (const NamedParam& p : cpu.params) std::cout << " " << p.name << "=" << p.value;
    std::cout << "\n";
  }
  std::cout << "// Correct = allclose(atol=" << w.tolerance.atol << ", rtol=" << w.tolerance.rtol
            << ") and relative L2 error <= " << w.tolerance.max_rel_l2 << " against an fp32 oracle";
  if (w.tolerance.term_rtol > 0)
    std::cout << ";\n// each element's bound also grows by " << w.tolerance.term_rtol
              << " * the sum of |terms| the original rounds to bf16 before summing them";
  std::cout << ".\n\n";
  if (!w.scaffold.empty()) {
    std::cout << w.scaffold;
    return 0;
  }
  // No naive kernel written for this workload: the entry point, which a candidate fills in.
  std::cout << "// No naive scaffold for " << w.name
            << " yet: the operator above is its semantics (docs/workloads.md says more).\n"
            << "#include \"kbench/kernel.h\"\n\n"
            << "extern \"C\" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t "
               "num_inputs,\n"
            << "                      kb_tensor* outputs, int32_t num_outputs) {\n"
            << "  (void)cfg;\n  (void)inputs;\n  (void)num_inputs;\n  (void)outputs;\n"
            << "  (void)num_outputs;\n  return 1;  // not implemented\n}\n";
  return 0;
}

Subcommand add_scaffold_command(CLI::App& app) {
  auto scaffold = std::make_shared<ScaffoldOptions>();
  auto* scaffold_cmd =
      app.add_subcommand("scaffold",
                         "Print a candidate to start from: the workload's operator, tensors and "
                         "build command, with a naive, correct kernel");
  // Positional, or -w as every other command takes it.
  scaffold_cmd
      ->add_option("workload,--workload,-w", scaffold->workload,
                   "Workload id or name (8p or 8p_GEMM)")
      ->required();
  return {scaffold_cmd, [scaffold] { return scaffold_command(*scaffold); }};
}

}  // namespace kbench::cli
