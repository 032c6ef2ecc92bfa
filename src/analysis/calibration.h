// The clock that turns llvm-mca's cycles into time on this machine, calibrated against `kbench
// probe`'s own fp32 FMA micro-kernel: the model simulates a loop like the probe's (12 independent
// FMA chains at the probe's vector width), and the clock is the one at which the model's cycles
// give the probe's measured rate. A model that misjudges the FMA units (LLVM 19's sapphirerapids
// allows one 512-bit FMA per cycle where the probe measures two) shows as an implausible clock.
// On AVX-512 machines the probe's ymm loop gives narrower loops their own clock, and its bf16 dot
// loop checks the model's vdpbf16ps.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "probe/probe.h"

namespace kbench::analysis {

// A rate the probe measured beside the model's rate on a loop like the probe's, at the calibrated
// clock: how far the model's time for such code is off.
struct RateCheck {
  double probe_gflops = 0;
  double model_flops_per_cycle = 0;
  double model_gflops = 0;  // model_flops_per_cycle at the clock of the probe's width
  double ratio() const { return probe_gflops > 0 ? model_gflops / probe_gflops : 0; }
};

struct Calibration {
  std::string isa;                   // the probe's fp32 kernel: "avx512f", "avx2+fma", "sse2"
  double model_flops_per_cycle = 0;  // the model's rate on the probe-like loop
  double probe_gflops = 0;           // the probe's measured single-thread fp32 FMA rate
  double clock_ghz = 0;              // probe_gflops / model_flops_per_cycle
  std::string warning;               // set when the clock is outside what x86 cores run at
  // The clock of ymm, xmm and scalar loops, where the probe measured ymm apart from zmm (an
  // AVX-512 core runs narrower code at a higher clock): the same loop at 256 bits.
  std::optional<double> ymm_clock_ghz;
  std::optional<double> probe_ymm_gflops;
  // vdpbf16ps, where the probe measured it: LLVM's models differ by 4x on it (cooperlake issues two
  // a cycle, sapphirerapids one every two cycles), and the fp32 check does not see that.
  std::optional<RateCheck> bf16_dot;
  std::string bf16_warning;  // set when the model's vdpbf16ps rate is off by more than 1.5x

  // The clock a loop of `vector_bits` (0 scalar, 128, 256, 512) runs at.
  double clock_for(int vector_bits) const {
    return vector_bits < 512 && ymm_clock_ghz ? *ymm_clock_ghz : clock_ghz;
  }
};

// The model's rates on loops like the probe's (12 independent chains at the probe's widths)
// against the probe's figures.
Calibration calibrate(const std::string& model, const PeakReport& probe);

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
// a probe, the first candidate, uncalibrated.
ModelChoice choose_model(const std::optional<PeakReport>& probe);

}  // namespace kbench::analysis
