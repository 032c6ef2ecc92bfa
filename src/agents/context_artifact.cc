// Loads the context artifact from disk, picks this machine's target from cpuid, and writes the
// measured hardware summary (hardware.md) from a probe's peaks.
#include "agents/context_artifact.h"
#include "core/number_format.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/amx.h"
#include "core/cpu_caches.h"
#include "core/environment.h"
#include "core/mkl_runtime.h"
#include "core/text.h"

namespace kbench::agents {
namespace fs = std::filesystem;

namespace {

// The five parts of an artifact in prompt order: what the machine is, what the harness demands,
// how to say it, what to try, and what complete code looks like. The examples come last so the
// code the model read most recently is a complete candidate.
const std::vector<std::string> kParts = {"hardware", "rules", "api", "menu", "examples"};

// Shared by every target; loaded before the target's own file of the same part.
constexpr const char* kCommonDir = "common";

struct TargetInfo {
  const char* name;
  const char* march;  // a CPU whose ISA is the target's, for compile-only checks elsewhere
  const char* published;
};

// Published facts (vendor manuals), never measured: what hardware.md says about the units.
const TargetInfo kTargets[] = {
    {"avx2", "-march=haswell",
     "16 ymm registers of 256 bits (8 f32); 2 FMA pipes per core on Haswell..Zen 3 (Zen 3: 2 FMA + "
     "2 FADD); no mask registers, no native bf16 arithmetic (widen bf16 to f32 with a 16-bit "
     "shift)."},
    {"avx512", "-march=icelake-server",
     "32 zmm registers of 512 bits (16 f32) and 8 mask registers k0-k7; 1 or 2 512-bit FMA pipes "
     "per core (Ice Lake server: 2 on most Xeon SKUs); AVX512_VNNI (int8/int16 dot), no native "
     "bf16 arithmetic (widen bf16 to f32)."},
    {"avx512-bf16", "-march=cooperlake",
     "As avx512, plus AVX512_BF16: vdpbf16ps (pairs of bf16 products summed into f32, 4 flops per "
     "f32 lane) and vcvtne2ps2bf16 / vcvtneps2bf16 (round-to-nearest-even f32 to bf16). Zen 4 "
     "runs 512-bit ops as two 256-bit halves."},
    {"amx", "-march=sapphirerapids",
     "As avx512-bf16, plus AVX512_FP16 and AMX: 8 tile registers tmm0-7 of up to 16 rows x 64 "
     "bytes; tdpbf16ps computes a 16x16 f32 tile += 16x32 bf16 times 32x16 bf16 (16384 flops per "
     "instruction); the tile-data state needs the arch_prctl permission."},
};

const TargetInfo& target_info(const std::string& target) {
  for (const TargetInfo& t : kTargets)
    if (target == t.name) return t;
  std::string known;
  for (const TargetInfo& t : kTargets) known += std::string(known.empty() ? "" : ", ") + t.name;
  throw std::runtime_error("unknown context target '" + target + "' (known: " + known + ")");
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || fs::is_directory(path))
    throw std::runtime_error("cannot read context file " + path.string());
  return text.str();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string kib(long bytes) {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0)
    return std::to_string(bytes / (1024 * 1024)) + " MiB";
  if (bytes >= 1024 * 1024) return fixed(static_cast<double>(bytes) / (1024 * 1024), 2) + " MiB";
  return std::to_string(bytes / 1024) + " KiB";
}

std::string rate_row(const std::string& unit, const std::optional<double>& gflops,
                     const std::string& method, const std::string& absent) {
  if (!gflops) return "| " + unit + " | not available | " + absent + " |\n";
  return "| " + unit + " | " + fixed(*gflops, 1) + " | " + method + " |\n";
}

}  // namespace

const std::vector<std::string>& context_targets() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const TargetInfo& t : kTargets) v.emplace_back(t.name);
    return v;
  }();
  return names;
}

std::string detect_target() {
  __builtin_cpu_init();
  // AVX-512 kernels in the artifact use BW (16-bit lanes for bf16) and VL (masked 256-bit ops).
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  if (avx512 && cpu_has_amx_bf16() && request_amx_permission()) return "amx";
  if (avx512 && __builtin_cpu_supports("avx512bf16")) return "avx512-bf16";
  if (avx512) return "avx512";
  return "avx2";
}

std::string target_march_flag(const std::string& target) {
  return target_info(target).march;
}

std::size_t ContextArtifact::bytes() const {
  std::size_t total = 0;
  for (const ContextFile& f : files) total += f.text.size();
  return total;
}

ContextArtifact load_context(const std::string& context_dir, const std::string& target) {
  target_info(target);  // throws for an unknown target before touching the disk
  const fs::path root(context_dir);
  const fs::path target_dir = root / target;
  std::error_code ec;
  if (!fs::is_directory(target_dir, ec))
    throw std::runtime_error("context directory " + target_dir.string() +
                             " is missing or unreadable (context root " + root.string() + ")");
  ContextArtifact artifact{target, root.string(), {}};
  for (const std::string& part : kParts) {
    bool found = false;
    for (const std::string& dir : {std::string(kCommonDir), target}) {
      const fs::path path = root / dir / (part + ".md");
      if (!fs::exists(path, ec)) continue;
      artifact.files.push_back({dir + "/" + part + ".md", read_file(path)});
      found = true;
    }
    if (!found)
      throw std::runtime_error("context directory " + target_dir.string() + " has no " + part +
                               ".md (nor has " + (root / kCommonDir).string() + ")");
  }
  return artifact;
}

std::string context_prompt_text(const ContextArtifact& artifact) {
  std::string text;
  for (const ContextFile& f : artifact.files) {
    text += "# Context file: " + f.name + "\n\n" + f.text;
    if (!ends_with(text, "\n")) text += "\n";
    text += "\n";
  }
  return text;
}

std::vector<std::string> optimization_menu(const ContextArtifact& artifact) {
  std::vector<std::string> menu;
  for (const ContextFile& f : artifact.files) {
    if (!ends_with(f.name, "/menu.md")) continue;
    std::istringstream lines(f.text);
    bool in_menu = false;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind('#', 0) == 0) {
        in_menu = trim(line) == "## Menu";
      } else if (in_menu && line.rfind("- ", 0) == 0) {
        const std::string entry = trim(line.substr(2));
        if (!entry.empty()) menu.push_back(entry);
      }
    }
  }
  return menu;
}

std::vector<std::string> example_sources(const ContextArtifact& artifact) {
  std::vector<std::string> sources;
  for (const ContextFile& f : artifact.files) {
    if (!ends_with(f.name, "/examples.md")) continue;
    std::istringstream lines(f.text);
    bool in_code = false, in_other_fence = false;
    std::string code;
    for (std::string line; std::getline(lines, line);) {
      const std::string t = trim(line);
      if (in_code || in_other_fence) {
        if (t == "```") {
          if (in_code && code.find("kb_run(") != std::string::npos) sources.push_back(code);
          in_code = in_other_fence = false;
          code.clear();
        } else if (in_code) {
          code += line + "\n";
        }
      } else if (t == "```cpp" || t == "```c++" || t == "```c") {
        in_code = true;
      } else if (t.rfind("```", 0) == 0) {
        in_other_fence = true;  // a shell line or a table: not a candidate
      }
    }
  }
  return sources;
}

MachineFacts this_machine_facts() {
  const Environment& env = current_environment();
  MachineFacts facts;
  facts.cpu_model = env.cpu_model;
  facts.isa_flags = env.cpu_flags;
  facts.logical_cpus = env.logical_cpus;
  const CpuCaches& caches = cpu_caches();
  facts.l1d_bytes = caches.l1d_bytes;
  facts.l2_bytes = caches.l2_bytes;
  facts.l3_bytes = caches.l3_bytes;
  facts.l3_shared_by = caches.l3_shared_by;
  return facts;
}

std::string hardware_summary_markdown(const PeakReport& peaks, const std::string& target,
                                      const MachineFacts& machine) {
  const TargetInfo& info = target_info(target);
  const auto method = [&peaks](const char* figure) {
    const auto it = peaks.methods.find(figure);
    return it == peaks.methods.end() ? std::string("-") : it->second;
  };
  std::string md = "# Hardware: " + target + " (measured on this machine)\n\n";
  md +=
      "Generated by `kbench agent context --write` from `kbench probe`; every number below was "
      "measured on this machine, except the section marked published.\n\n";
  md += "- CPU: " + machine.cpu_model + ", " + std::to_string(machine.logical_cpus) +
        " logical CPUs\n";
  md += "- ISA flags: " + machine.isa_flags + "\n";
  std::string caches;
  if (machine.l1d_bytes > 0) caches += "L1d " + kib(machine.l1d_bytes) + " per core";
  if (machine.l2_bytes > 0)
    caches +=
        (caches.empty() ? "" : ", ") + std::string("L2 ") + kib(machine.l2_bytes) + " per core";
  if (machine.l3_bytes > 0) {
    caches += (caches.empty() ? "" : ", ") + std::string("L3 ") + kib(machine.l3_bytes);
    if (machine.l3_shared_by > 0)
      caches += " shared by " + std::to_string(machine.l3_shared_by) + " logical CPUs";
  }
  md += "- Caches: " + (caches.empty() ? std::string("unknown") : caches) + "\n";
  md += "- oneMKL for candidates (api.md, section oneMKL): " +
        (mkl::runtime() ? mkl::runtime()->version
                        : std::string("not available in this build; include only OpenBLAS, "
                                      "oneDNN and Highway")) +
        "\n\n";

  md += "## Measured peaks (" + std::to_string(peaks.threads) + " thread" +
        (peaks.threads == 1 ? "" : "s") + ")\n\n";
  md += "| unit | GFLOP/s | how measured |\n|---|---|---|\n";
  md += rate_row("fp32 FMA", peaks.fp32_fma_gflops, method("fp32_fma"), "");
  md += rate_row("bf16 dot (vdpbf16ps)", peaks.bf16_dot_gflops, method("bf16_dot"),
                 "no avx512_bf16: widen bf16 to f32 and use fp32 FMA");
  md +=
      rate_row("fp16 FMA (vfmadd*ph)", peaks.fp16_fma_gflops, method("fp16_fma"), "no avx512_fp16");
  md += rate_row("AMX bf16 (tdpbf16ps)", peaks.amx_bf16_gflops, method("amx_bf16"),
                 "no amx_bf16, or the kernel refused the tile permission");
  if (!peaks.library_gemm_method.empty())
    md += "| library bf16 GEMM (best path) | " + fixed(peaks.library_gemm_gflops, 1) + " | " +
          peaks.library_gemm_method + " |\n";
  for (const auto& [path, gflops] : peaks.library_gemm_paths)
    md += "| library GEMM path " + path + " | " + fixed(gflops, 1) + " | bf16 in and out |\n";
  md +=
      "\n- Memory bandwidth: " + fixed(peaks.mem_bw_gbps, 1) + " GB/s (" + method("mem_bw") + ")\n";
  md += "- Loops the probe ran: " + peaks.isa_used + "\n\n";

  md += "## Derived\n\n";
  const auto [matmul_peak, matmul_unit] = peaks.bf16_matmul_peak();
  md += "- bf16 matmul peak: " + fixed(matmul_peak, 1) + " GFLOP/s on " + matmul_unit +
        " (the fastest unit for bf16 products with f32 sums here).\n";
  // The target's own API and menu teach vdpbf16ps; where this core issues it slowly, say so.
  if (peaks.bf16_dot_gflops && matmul_unit == "fp32_fma")
    md += "- vdpbf16ps (" + fixed(*peaks.bf16_dot_gflops, 1) +
          " GFLOP/s) is slower here than fp32 FMA: a bf16 matmul runs faster with its operands "
          "widened to f32 once, as they are packed, than on dot-product instructions.\n";
  if (matmul_peak > 0 && peaks.library_gemm_gflops > 0)
    md += "- The best library GEMM reaches " +
          fixed(100.0 * peaks.library_gemm_gflops / matmul_peak, 0) +
          "% of that peak: the baselines' matmuls run near this rate, and what lies above it is a "
          "hand kernel's room.\n";
  if (peaks.mem_bw_gbps > 0) {
    md += "- Balance point: " + fixed(peaks.fp32_fma_gflops / peaks.mem_bw_gbps, 1) +
          " flops/byte at fp32 FMA peak";
    if (matmul_unit != "fp32_fma")
      md +=
          ", " + fixed(matmul_peak / peaks.mem_bw_gbps, 1) + " flops/byte at the bf16 matmul peak";
    md +=
        ". A kernel with fewer flops per DRAM byte is memory-bound (RMSNorm, softmax, elementwise "
        "ops: ~1-5 flops per 4 bytes); one with more is compute-bound (large GEMM: 2MNK / "
        "(2(MK+KN+MN)) flops per byte with bf16 operands).\n";
    md += "- Memory time floor: 1 GiB moved takes at least " +
          fixed(1.073741824 / peaks.mem_bw_gbps * 1000.0, 1) + " ms.\n";
  }
  if (peaks.threads > 1)
    md +=
        "- Per thread: " + fixed(peaks.fp32_fma_gflops / peaks.threads, 1) + " GFLOP/s fp32 FMA.\n";
  if (machine.l1d_bytes > 0)
    md += "- L1d holds " + std::to_string(machine.l1d_bytes / 4) + " f32 or " +
          std::to_string(machine.l1d_bytes / 2) +
          " bf16 values: keep a micro-kernel's packed A and B panels within about half of it.\n";
  if (machine.l2_bytes > 0)
    md += "- L2 holds " + std::to_string(machine.l2_bytes / 4) +
          " f32 values: size the packed A block (MC x KC) to about half of it.\n";
  md += "\n## Published (not measured)\n\n" + std::string(info.published) + "\n";
  return md;
}

std::string hardware_summary_markdown(const PeakReport& peaks, const std::string& target) {
  return hardware_summary_markdown(peaks, target, this_machine_facts());
}

std::string default_context_dir() {
  if (const char* dir = std::getenv("KBENCH_CONTEXT_DIR"); dir && *dir) return dir;
  return KBENCH_CONTEXT_DIR;
}

}  // namespace kbench::agents
