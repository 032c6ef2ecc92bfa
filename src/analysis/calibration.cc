#include "analysis/calibration.h"

#include <vector>

#include "analysis/mca.h"
#include "core/environment.h"
#include "core/number_format.h"

namespace kbench::analysis {

namespace {

constexpr int kChains = 12;  // the probe's independent accumulators

// The model's flops per cycle on a loop like the probe's: 12 independent chains of `instruction`
// on `reg` registers (SSE2: mulps then addps), each doing `flops` per iteration.
double model_flops_per_cycle(const std::string& model, const std::string& instruction,
                             const std::string& reg, double flops) {
  std::vector<std::string> loop;
  for (int chain = 0; chain < kChains; ++chain) {
    const std::string acc = reg + std::to_string(chain + 2);
    if (instruction == "mulps+addps") {
      loop.push_back("mulps %xmm0, %xmm14");
      loop.push_back("addps %xmm14, " + acc);
    } else {
      loop.push_back(instruction + " " + reg + "0, " + reg + "1, " + acc);
    }
  }
  loop.insert(loop.end(), {"decq %rax", "jne .Lcalibrate"});
  return kChains * flops / simulate_loop(loop, model).cycles_per_iter;
}

}  // namespace

Calibration calibrate(const std::string& model, const PeakReport& probe) {
  Calibration c;
  // "fp32:avx2+fma library:... mem:...": the fp32 kernel's ISA.
  const std::size_t fp32 = probe.isa_used.find("fp32:");
  c.isa = fp32 == std::string::npos ? probe.isa_used : probe.isa_used.substr(fp32 + 5);
  c.isa = c.isa.substr(0, c.isa.find(' '));
  c.probe_gflops = probe.fp32_fma_gflops;
  if (c.isa == "avx512f")
    c.model_flops_per_cycle = model_flops_per_cycle(model, "vfmadd231ps", "%zmm", 16 * 2.0);
  else if (c.isa == "avx2+fma")
    c.model_flops_per_cycle = model_flops_per_cycle(model, "vfmadd231ps", "%ymm", 8 * 2.0);
  else
    c.model_flops_per_cycle = model_flops_per_cycle(model, "mulps+addps", "%xmm", 4 * 2.0);
  c.clock_ghz = c.probe_gflops / c.model_flops_per_cycle;
  if (c.clock_ghz < 1.0 || c.clock_ghz > 6.0)
    c.warning = "the model's fp32 FMA rate (" + fixed(c.model_flops_per_cycle, 1) +
                " flops/cycle) and the probe's (" + fixed(c.probe_gflops, 1) +
                " GFLOP/s) imply a clock of " + fixed(c.clock_ghz, 2) +
                " GHz: the model misjudges this CPU's FMA units, so its times are off as much";
  if (probe.fp32_fma_ymm_gflops && c.isa == "avx512f") {
    c.probe_ymm_gflops = probe.fp32_fma_ymm_gflops;
    c.ymm_clock_ghz =
        *probe.fp32_fma_ymm_gflops / model_flops_per_cycle(model, "vfmadd231ps", "%ymm", 8 * 2.0);
  }
  if (probe.bf16_dot_gflops) {
    // 32 bf16 products summed pairwise into 16 f32 lanes: 4 flops per lane, as the probe counts.
    RateCheck check;
    check.probe_gflops = *probe.bf16_dot_gflops;
    check.model_flops_per_cycle = model_flops_per_cycle(model, "vdpbf16ps", "%zmm", 16 * 4.0);
    check.model_gflops = check.model_flops_per_cycle * c.clock_ghz;
    if (check.ratio() > 1.5 || check.ratio() < 1 / 1.5)
      c.bf16_warning = "the model runs vdpbf16ps at " + fixed(check.model_gflops, 1) +
                       " GFLOP/s where the probe measures " + fixed(check.probe_gflops, 1) +
                       ": it would time loops of bf16 dot products " + fixed(check.ratio(), 2) +
                       "x too fast, so they are counted at the probe's rate";
    c.bf16_dot = check;
  }
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

ModelChoice choose_model(const std::optional<PeakReport>& probe) {
  const auto candidates = candidate_models();
  ModelChoice first{candidates.front().first, candidates.front().second, std::nullopt};
  if (!probe || probe->fp32_fma_gflops <= 0) {
    first.reason += "; not calibrated";
    return first;
  }
  for (const auto& [model, why] : candidates) {
    const Calibration c = calibrate(model, *probe);
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
