// `kbench probe`: measure (or show the cached) compute and memory peaks of this machine.
#include <cstdio>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "core/amx.h"
#include "core/environment.h"

namespace kbench::cli {

int probe_command(const ProbeOptions& options) {
  threads_or_usage_error(options.threads);
  const MachinePeaks measured = machine_peaks(options.threads, options.force);
  const PeakReport& peaks = measured.peaks;
  if (options.json) {
    nlohmann::json j = peaks.to_json();
    j["measured_at"] = measured.measured_at;
    j["cache_dir"] = machine_cache().dir().string();
    j["machine_id"] = current_environment().machine_id();
    j["cpu_model"] = current_environment().cpu_model;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const Environment& env = current_environment();
  std::printf("machine      %s (%d logical CPUs; %s)\n", env.cpu_model.c_str(), env.logical_cpus,
              env.cpu_flags.c_str());
  std::printf("measured     %s  (kept in %s; --force measures again)\n",
              measured.measured_at.c_str(), machine_cache().dir().c_str());
  std::printf("threads      %d\n", peaks.threads);
  const auto method = [&peaks](const char* figure) -> std::string {
    const auto it = peaks.methods.find(figure);
    return it == peaks.methods.end() ? "" : "  (" + it->second + ")";
  };
  std::printf("fp32 FMA     %8.1f GFLOP/s%s\n", peaks.fp32_fma_gflops, method("fp32_fma").c_str());
  if (peaks.fp32_fma_ymm_gflops)
    std::printf("fp32 FMA ymm %8.1f GFLOP/s%s\n", *peaks.fp32_fma_ymm_gflops,
                method("fp32_fma_ymm").c_str());
  if (peaks.bf16_dot_gflops)
    std::printf("bf16 dot     %8.1f GFLOP/s%s\n", *peaks.bf16_dot_gflops,
                method("bf16_dot").c_str());
  else
    std::printf("bf16 dot          n/a (no avx512_bf16)\n");
  if (peaks.fp16_fma_gflops)
    std::printf("fp16 FMA     %8.1f GFLOP/s%s\n", *peaks.fp16_fma_gflops,
                method("fp16_fma").c_str());
  else
    std::printf("fp16 FMA          n/a (no avx512_fp16)\n");
  if (peaks.amx_bf16_gflops)
    std::printf("AMX bf16     %8.1f GFLOP/s%s\n", *peaks.amx_bf16_gflops,
                method("amx_bf16").c_str());
  else if (cpu_has_amx_bf16())
    std::printf("AMX bf16          n/a (the kernel refused the tile-data permission)\n");
  else
    std::printf("AMX bf16          n/a (no amx_bf16)\n");
  if (!peaks.library_gemm_method.empty())
    std::printf("library GEMM %8.1f GFLOP/s  (%s, bf16 in and out)\n", peaks.library_gemm_gflops,
                peaks.library_gemm_method.c_str());
  else
    std::printf("library GEMM      n/a (no library path ran)\n");
  const auto [matmul_peak, matmul_unit] = peaks.bf16_matmul_peak();
  std::printf("bf16 matmul  %8.1f GFLOP/s  (%s: the fastest unit for bf16 matmul math here)\n",
              matmul_peak, matmul_unit.c_str());
  std::printf("memory       %8.1f GB/s%s\n", peaks.mem_bw_gbps, method("mem_bw").c_str());
  std::printf("method       %s\n", peaks.isa_used.c_str());
  return 0;
}

Subcommand add_probe_command(CLI::App& app) {
  auto probe = std::make_shared<ProbeOptions>();
  auto* probe_cmd = app.add_subcommand(
      "probe", "Measure this machine's compute and memory peaks (cached per machine)");
  probe_cmd->add_option("--threads", probe->threads, "Threads to measure with")
      ->capture_default_str();
  probe_cmd->add_flag("--force", probe->force, "Measure again even when cached");
  add_json_flag(probe_cmd, probe->json, "one JSON object");
  return {probe_cmd, [probe] { return probe_command(*probe); }};
}

}  // namespace kbench::cli
