// `kbench probe`: measure (or show the cached) compute and memory peaks of this machine.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/context.h"
#include "core/environment.h"

namespace kbench::cli {

int probe_command(const ProbeOptions& options) {
  threads_or_usage_error(options.threads);
  ResultStore store = open_store(options.db);
  const PeakReport peaks = machine_peaks(store, options.threads, options.force);
  if (options.json) {
    nlohmann::json j = peaks.to_json();
    j["machine_id"] = current_environment().machine_id();
    j["cpu_model"] = current_environment().cpu_model;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const Environment& env = current_environment();
  std::printf("machine      %s (%d logical CPUs; %s)\n", env.cpu_model.c_str(), env.logical_cpus,
              env.cpu_flags.c_str());
  std::printf("threads      %d\n", peaks.threads);
  std::printf("fp32 FMA     %8.1f GFLOP/s\n", peaks.fp32_fma_gflops);
  if (peaks.bf16_dot_gflops)
    std::printf("bf16 dot     %8.1f GFLOP/s\n", *peaks.bf16_dot_gflops);
  else
    std::printf("bf16 dot          n/a (no avx512_bf16)\n");
  if (peaks.fp16_fma_gflops)
    std::printf("fp16 FMA     %8.1f GFLOP/s\n", *peaks.fp16_fma_gflops);
  else
    std::printf("fp16 FMA          n/a (no avx512_fp16)\n");
  std::printf("memory       %8.1f GB/s\n", peaks.mem_bw_gbps);
  std::printf("method       %s\n", peaks.isa_used.c_str());
  return 0;
}

}  // namespace kbench::cli
