// What a workload is: its identity, size presets, and the three implementations kbench compares a
// candidate against (reference = truth, baseline = the bar to beat, which doubles as the fp32
// oracle).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/input_gen.h"
#include "core/tensor.h"
#include "kbench/kernel.h"

namespace kbench {

enum class Size { kSmoke, kCpu, kFull };
const char* size_name(Size size);
std::optional<Size> parse_size(std::string_view text);

enum class Group { kProduction, kKernelBenchL2 };
const char* group_name(Group group);  // "production" / "kernelbench_l2", as in the spec

// Signature shared by candidates, baselines and references: the ABI's kb_run.
using KernelFn = int (*)(const kb_config*, const kb_tensor*, int32_t, kb_tensor*, int32_t);

struct InputSpec {
  TensorSpec tensor;
  InitRule init;
};

struct NamedParam {
  std::string name;
  double value;
};

// One constant of the original program's configuration (its CONFIG dict, or a module-level
// constant): an integer, a float, a flag, a word or a list of integers, as the spec writes it.
struct ConfigEntry {
  using Value = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>>;
  std::string name;
  Value value;

  ConfigEntry(std::string key, int v) : name(std::move(key)), value(std::int64_t{v}) {}
  ConfigEntry(std::string key, std::int64_t v) : name(std::move(key)), value(v) {}
  ConfigEntry(std::string key, double v) : name(std::move(key)), value(v) {}
  ConfigEntry(std::string key, bool v) : name(std::move(key)), value(v) {}
  ConfigEntry(std::string key, const char* v) : name(std::move(key)), value(std::string(v)) {}
  ConfigEntry(std::string key, std::vector<std::int64_t> v)
      : name(std::move(key)), value(std::move(v)) {}
};

// A workload instantiated at one size: everything needed to allocate, fill and call it.
struct Problem {
  // The original's configuration at this size: every key of the spec's config_full, in its order,
  // with the value this size's shapes imply (at full size, the spec's own values), so that the
  // original program can be run unmodified on this size's inputs (`kbench export`,
  // python/kbench_jax/original.py).
  std::vector<ConfigEntry> config;
  // Module-level constants the original reads besides its CONFIG (the spec's scenario_constants:
  // 7p's static per-sequence lengths), at this size. Empty for most workloads.
  std::vector<ConfigEntry> scenario;
  std::vector<NamedParam> params;  // scalar parameters passed through kb_config, in spec order
  std::vector<InputSpec> inputs;   // in the spec's call order
  std::vector<TensorSpec> outputs;
  double flops = 0;  // the spec's FLOP formula at this size
  // The FLOPs a kernel cannot avoid, where the spec's formula counts work it may skip (a causal
  // mask's upper triangle, which JAXBench's formulas include): the roofline's compute floor. 0
  // means `flops`. GFLOP/s are always reported on `flops`, so they compare with JAXBench's.
  double essential_flops = 0;
  double min_bytes = 0;  // every input read once + every output written once, in their dtypes
};

// The spec's FLOP count of an (m x k) @ (k x n) matrix product: one multiply and one add per term.
constexpr double gemm_flops(std::int64_t m, std::int64_t k, std::int64_t n) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
}

// bf16's unit roundoff: rounding to nearest bf16 (8 significant bits) moves a value by at most 2^-8
// of its magnitude.
inline constexpr double kBf16UnitRoundoff = 0x1p-8;

// The correctness rule. Pass = every element within its bound, atol + rtol*|oracle| (JAXBench's
// allclose) + term_rtol*magnitude, and ||out - oracle|| / ||oracle|| <= max_rel_l2, and no NaN/Inf
// where the oracle has none. Tolerance{} is JAXBench's rule: allclose(atol=1e-2, rtol=1e-2) plus
// rel-L2 <= 1e-2.
struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
  double max_rel_l2 = 1e-2;
  // For an output the original sums from terms it rounds to bf16 first: the relative error each
  // rounded term may carry (kBf16UnitRoundoff), applied to that element's term magnitude, the sum
  // of the rounded terms' magnitudes (Workload::term_magnitude). Terms of either sign can cancel to
  // a sum far below them, so rtol * |oracle| cannot bound the sum's rounding error; this can,
  // since |sum of errors| <= 2^-8 * sum |term|. 0 where no output is such a sum.
  double term_rtol = 0;
};

// The math a workload's FLOPs are made of, which fixes the compute roof it is measured against:
// bf16 matmul-class work (bf16 products summed in f32) against the machine's fastest unit for that
// math (PeakReport::bf16_matmul_peak), anything else against fp32 FMA. Whether the compute roof or
// the memory roof binds follows from flops / min_bytes against the machine's balance.
enum class MathClass { kBf16Matmul, kF32Vector };
const char* math_class_name(MathClass math);  // "bf16_matmul" / "f32_vector"

struct Workload {
  std::string_view name;  // "8p_GEMM": the id, '_', then the operator, as the spec names it
  // Production: the model the operator comes from. KernelBench Level 2: empty, and
  // `kernelbench_problem` numbers the original problem, whose name is this one's with that number
  // in place of the id.
  std::string_view model;
  int kernelbench_problem = 0;
  std::string_view summary;  // one line: what it computes
  Problem (*problem)(Size size);
  // Straightforward, independent code accumulating in double; writes f32 outputs. The truth.
  KernelFn reference;
  // The bar to beat: the machine's fastest library GEMM (ops::gemm) with elementwise epilogues
  // fused into it and one vectorized pass per reduction, as a fusing compiler emits the program.
  // Writes outputs in whatever dtype the output tensors declare: bf16 (as timed, rounding between
  // ops like a bf16 framework) or f32 (the oracle: same code, no intermediate rounding).
  KernelFn baseline;
  Tolerance tolerance;  // JAXBench's rule unless the workload states its own
  MathClass math = MathClass::kBf16Matmul;
  // The original JAX program's arithmetic, emulated: its ops in its order, each rounding its result
  // to bf16 wherever the program holds a bf16 tensor (matmul outputs, scores, softmax, norms, ...),
  // f32 where it computes in f32. Writes outputs in their declared dtypes. A faithful port of the
  // original must pass, so the suite test requires `tolerance` to accept this program on 20 smoke
  // and 3 cpu seeds.
  KernelFn bf16_program = nullptr;
  // For workloads with a term_rtol: per output element, the sum of |v| over every value v the
  // original rounds to bf16 and then sums into that element, in the output's units (a value rounded
  // twice on its way counts twice). Writes one f32 tensor per output, of the output's shape. The
  // rule's term_rtol multiplies it; without it (callers that lack the inputs) the rule is at its
  // strictest, never looser.
  KernelFn term_magnitude = nullptr;
  // For workloads whose output reduces over tokens (a mean loss): the output estimated from a
  // subsample of the tokens, as a shortcut kernel would compute it. The suite test requires
  // `tolerance` to reject it on more than half of the draws (harness/suite_checks.h,
  // draw_dependent_rates). Null where no output reduces over tokens.
  KernelFn subsample_estimate = nullptr;
  // Inputs the operator cancels exactly, such as a bias added before a norm that subtracts each
  // channel's mean: the output does not depend on them (but for rounding), so a kernel may skip
  // them, and the suite does not ask the rule to notice their absence (it asks it to notice every
  // other random input's on most draws; harness/suite_checks.h). The file's header says why each is
  // cancelled.
  std::span<const std::string_view> cancelled_inputs;
  // Inputs the operator does not cancel but whose whole effect on the output stays within the
  // rule, with no distribution of the input that a faithful program's error leaves room for (46k's
  // group-norm affine parameters, seen only through a tanh and a log-sum-exp over 64 channels). A
  // kernel that leaves one out goes unnoticed, at no saving of work worth timing; the header and
  // docs/workloads.md say so, and the suite exempts them as it does the cancelled ones.
  std::span<const std::string_view> inputs_below_rule;
  // A naive but correct candidate, printed by `kbench scaffold`; empty where the workload has none
  // (the command then prints the entry point's skeleton).
  std::string_view scaffold;

  // "8p": the name up to its first '_'.
  constexpr std::string_view id() const { return name.substr(0, name.find('_')); }
  // The id's last letter says it: 'p' a production operator, 'k' a KernelBench Level 2 problem.
  constexpr Group group() const {
    return id().ends_with('p') ? Group::kProduction : Group::kKernelBenchL2;
  }
  // As the spec's source_model writes it.
  std::string source_model() const;
};

// Tensors of a size preset that `problem` describes, plus kb_config params helpers.
std::vector<kb_param> abi_params(const Problem& problem);

// Bytes of all inputs and outputs in their dtypes.
double tensor_bytes(const Problem& problem);

}  // namespace kbench
