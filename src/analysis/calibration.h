// The clock that turns llvm-mca's cycles into time on this machine, calibrated against `kbench
// probe`'s own fp32 FMA micro-kernel: the model simulates a loop like the probe's (12 independent
// FMA chains at the probe's vector width), and the clock is the one at which the model's cycles
// give the probe's measured rate. A model that misjudges the FMA units (LLVM 19's sapphirerapids
// allows one 512-bit FMA per cycle where the probe measures two) shows as an implausible clock.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kbench::analysis {

struct Calibration {
  std::string isa;                   // the probe's fp32 kernel: "avx512f", "avx2+fma", "sse2"
  double model_flops_per_cycle = 0;  // the model's rate on the probe-like loop
  double probe_gflops = 0;           // the probe's measured single-thread fp32 FMA rate
  double clock_ghz = 0;              // probe_gflops / model_flops_per_cycle
  std::string warning;               // set when the clock is outside what x86 cores run at
};

// `probe_isa` is PeakReport::isa_used ("fp32:avx2+fma library:... mem:...") or its fp32 kernel's
// ISA alone ("avx2+fma").
Calibration calibrate(const std::string& model, const std::string& probe_isa, double probe_gflops);

// llvm-mca's models worth trying on this CPU, from its vendor and ISA extensions (a VM can mask
// the model name: compilers see `rocketlake` on a Sapphire Rapids host), best first, each with why.
std::vector<std::pair<std::string, std::string>> candidate_models();

struct ModelChoice {
  std::string model;
  std::string reason;
  std::optional<Calibration> calibration;  // none where no probe figure was given
};

// The first candidate model whose calibration against the probe gives a clock x86 cores run at
// (1-6 GHz), said with its check; the first candidate, with its warning, where none does. Without
// a probe figure (probe_gflops 0), the first candidate, uncalibrated.
ModelChoice choose_model(const std::string& probe_isa, double probe_gflops);

}  // namespace kbench::analysis
