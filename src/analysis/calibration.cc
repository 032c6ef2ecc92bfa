#include "analysis/calibration.h"

#include <vector>

#include "analysis/mca.h"
#include "core/environment.h"
#include "core/number_format.h"

namespace kbench::analysis {

Calibration calibrate(const std::string& model, const std::string& probe_isa, double probe_gflops) {
  Calibration c;
  // "fp32:avx2+fma library:... mem:...": the fp32 kernel's ISA.
  const std::size_t fp32 = probe_isa.find("fp32:");
  c.isa = fp32 == std::string::npos ? probe_isa : probe_isa.substr(fp32 + 5);
  c.isa = c.isa.substr(0, c.isa.find(' '));
  c.probe_gflops = probe_gflops;
  std::string reg = "%xmm";
  int lanes = 4;
  std::string fma = "vfmadd231ps";
  if (c.isa == "avx512f") {
    reg = "%zmm";
    lanes = 16;
  } else if (c.isa == "avx2+fma") {
    reg = "%ymm";
    lanes = 8;
  }
  // The probe's kernel: 12 independent accumulators, each a chain of FMAs (SSE2: mul then add).
  constexpr int kChains = 12;
  std::vector<std::string> loop;
  for (int chain = 0; chain < kChains; ++chain) {
    const std::string acc = reg + std::to_string(chain + 2);
    if (c.isa == "sse2") {
      loop.push_back("mulps %xmm0, %xmm14");
      loop.push_back("addps %xmm14, " + acc);
    } else {
      loop.push_back(fma + " " + reg + "0, " + reg + "1, " + acc);
    }
  }
  loop.insert(loop.end(), {"decq %rax", "jne .Lcalibrate"});
  const LoopCost cost = simulate_loop(loop, model);
  c.model_flops_per_cycle = kChains * lanes * 2.0 / cost.cycles_per_iter;
  c.clock_ghz = probe_gflops / c.model_flops_per_cycle;
  if (c.clock_ghz < 1.0 || c.clock_ghz > 6.0)
    c.warning = "the model's fp32 FMA rate (" + fixed(c.model_flops_per_cycle, 1) +
                " flops/cycle) and the probe's (" + fixed(probe_gflops, 1) +
                " GFLOP/s) imply a clock of " + fixed(c.clock_ghz, 2) +
                " GHz: the model misjudges this CPU's FMA units, so its times are off as much";
  return c;
}

std::vector<std::pair<std::string, std::string>> candidate_models() {
  const bool amd = current_environment().cpu_model.find("AMD") != std::string::npos;
  // LLVM 19's sapphirerapids and icelake-server models issue one 512-bit FMA per cycle; the server
  // parts have two FMA units, as cooperlake and cascadelake model them: the probe decides.
  if (cpu_has("amx_bf16"))
    return {{"sapphirerapids", "the CPU has AMX (Sapphire Rapids and later)"},
            {"cooperlake", "AVX512-BF16 with two 512-bit FMA units (AMX not modelled)"}};
  if (amd && cpu_has("avx512f")) return {{"znver4", "an AMD CPU with AVX-512 (Zen 4)"}};
  if (amd && cpu_has("avx2")) return {{"znver3", "an AMD CPU with AVX2 and no AVX-512 (Zen 3)"}};
  if (cpu_has("avx512_bf16"))
    return {{"cooperlake", "an Intel CPU with AVX512-BF16 and no AMX"},
            {"sapphirerapids", "an Intel CPU with AVX512-BF16, one 512-bit FMA unit"}};
  if (cpu_has("avx512f"))
    return {{"icelake-server", "an Intel CPU with AVX-512"},
            {"cascadelake", "an Intel CPU with AVX-512 and two 512-bit FMA units"}};
  if (cpu_has("avx2")) return {{"skylake", "an Intel CPU with AVX2 and no AVX-512"}};
  return {{"x86-64", "no AVX2: the generic x86-64 model"}};
}

ModelChoice choose_model(const std::string& probe_isa, double probe_gflops) {
  const auto candidates = candidate_models();
  ModelChoice first{candidates.front().first, candidates.front().second, std::nullopt};
  if (probe_gflops <= 0) {
    first.reason += "; not calibrated";
    return first;
  }
  for (const auto& [model, why] : candidates) {
    const Calibration c = calibrate(model, probe_isa, probe_gflops);
    if (!first.calibration) first.calibration = c;
    if (c.warning.empty())
      return {model,
              why + "; its fp32 FMA rate matches the probe at " + fixed(c.clock_ghz, 2) + " GHz",
              c};
  }
  first.reason += "; no model matched the probe's fp32 FMA rate";
  return first;
}

}  // namespace kbench::analysis
