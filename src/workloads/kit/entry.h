// The kb_run-shaped entry points of a workload's programs, written once: check the call against the
// workload's signature, then run a body that receives the checked extents. A workload's reference,
// baseline and bf16 program then start with their own work, not with the same three lines of
// checks.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include "kbench/kernel.h"
#include "workloads/workload.h"

namespace kbench {

// What a program requires of the call's first output beyond its extents: the reference writes
// the f32 truth, the bf16 program the original's bf16 result, and the baseline either (bf16 timed,
// f32 the oracle).
enum class OutputDtype { kAny, kF32, kBf16 };

// An entry point (Workload::reference, ::baseline, ::bf16_program) that returns 1 for a call whose
// tensors `kShapeOf` rejects (it returns nullopt) or whose out[0] is not `kOut`, and otherwise
// returns kBody(shape, [cfg,] in, out). kShapeOf takes (in, num_inputs, out, num_outputs), with a
// leading cfg where the signature includes a parameter; kBody takes cfg only where it reads one.
template <auto kShapeOf, auto kBody, OutputDtype kOut = OutputDtype::kAny>
int checked_entry(const kb_config* cfg, const kb_tensor* in, std::int32_t num_inputs,
                  kb_tensor* out, std::int32_t num_outputs) {
  const auto shape = [&] {
    if constexpr (std::is_invocable_v<decltype(kShapeOf), const kb_config*, const kb_tensor*,
                                      std::int32_t, const kb_tensor*, std::int32_t>)
      return kShapeOf(cfg, in, num_inputs, out, num_outputs);
    else
      return kShapeOf(in, num_inputs, out, num_outputs);
  }();
  if (!shape) return 1;
  if (kOut == OutputDtype::kF32 && out[0].dtype != KB_F32) return 1;
  if (kOut == OutputDtype::kBf16 && out[0].dtype != KB_BF16) return 1;
  if constexpr (std::is_invocable_v<decltype(kBody), decltype(*shape), const kb_config*,
                                    const kb_tensor*, kb_tensor*>)
    return kBody(*shape, cfg, in, out);
  else
    return kBody(*shape, in, out);
}

// A workload's three programs behind one shape check: the reference must write the f32 truth, the
// baseline either dtype, the bf16 program `kProgramOut` (the original's bf16 result, unless the
// original's output is f32 whatever its inputs).
template <auto kShapeOf, auto kReference, auto kBaseline, auto kBf16Program,
          OutputDtype kProgramOut = OutputDtype::kBf16>
struct CheckedPrograms {
  static constexpr KernelFn reference = checked_entry<kShapeOf, kReference, OutputDtype::kF32>;
  static constexpr KernelFn baseline = checked_entry<kShapeOf, kBaseline>;
  static constexpr KernelFn bf16_program = checked_entry<kShapeOf, kBf16Program, kProgramOut>;
};

// `definition` with its reference, baseline and bf16 program taken from Programs (CheckedPrograms,
// attention::HeadPrograms, linear::EpiloguePrograms), so a workload file names its program set
// once and its definition holds only what describes it.
template <class Programs>
constexpr Workload with_programs(Workload definition) {
  definition.reference = Programs::reference;
  definition.baseline = Programs::baseline;
  definition.bf16_program = Programs::bf16_program;
  return definition;
}

}  // namespace kbench
