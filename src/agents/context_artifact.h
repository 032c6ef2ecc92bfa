// The curated context artifact (context/<target>/ plus context/common/): hardware summary, rules,
// API reference, optimization menu and examples that the context-using methods put in prompts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "probe/probe.h"

namespace kbench::agents {

// The CPU targets an artifact exists for, from the oldest ISA to the newest: "avx2" (AVX2+FMA),
// "avx512" (AVX-512F/BW/VL), "avx512-bf16" (+ AVX512_BF16), "amx" (+ AMX-BF16 tiles).
const std::vector<std::string>& context_targets();

// This machine's target from cpuid: the newest of context_targets() it can run. "amx" also needs
// the kernel's tile-data permission (core/amx.h); a CPU below AVX2 still gets "avx2", the floor.
std::string detect_target();

// The -march flag whose ISA matches a target (e.g. "-march=sapphirerapids" for "amx"), for
// compiling a target's code on a machine that lacks it; throws std::runtime_error for an unknown
// target.
std::string target_march_flag(const std::string& target);

struct ContextFile {
  std::string name;  // relative to the context root, e.g. "common/rules.md", "avx512/api.md"
  std::string text;
};

struct ContextArtifact {
  std::string target;
  std::string root;                // the context directory it was loaded from
  std::vector<ContextFile> files;  // in prompt order (see load_context)
  std::size_t bytes() const;       // of every file's text
};

// Loads <context_dir>/common/*.md and <context_dir>/<target>/*.md for the five parts hardware,
// rules, api, menu, examples, in that order; for each part the common file comes before the
// target's. Every part must exist in one of the two. Throws std::runtime_error (one line naming the
// directory or file) when the target is unknown, the target's directory is missing, or a part is
// missing or unreadable.
ContextArtifact load_context(const std::string& context_dir, const std::string& target);

// The files concatenated, each under a heading that names it, in load order.
std::string context_prompt_text(const ContextArtifact& artifact);

// The strategies of the optimization menu: the "- " bullets under "## Menu" of each menu.md, up to
// the next heading, bullet marker and surrounding blanks removed.
std::vector<std::string> optimization_menu(const ContextArtifact& artifact);

// The complete candidate sources among the examples: fenced ```cpp / ```c++ / ```c blocks of each
// examples.md that define kb_run.
std::vector<std::string> example_sources(const ContextArtifact& artifact);

// What the hardware summary needs to know about a machine beyond its measured peaks.
struct MachineFacts {
  std::string cpu_model;
  std::string isa_flags;  // space-separated, as current_environment().cpu_flags
  int logical_cpus = 0;
  // Per-core data/unified cache sizes in bytes; 0 when unknown.
  long l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
  int l3_shared_by = 0;  // logical CPUs sharing one L3 (0: unknown)
};

// This machine's facts: /proc/cpuinfo (through current_environment()) and the caches of
// /sys/devices/system/cpu/cpu0/cache, else sysconf.
MachineFacts this_machine_facts();

// hardware.md for `target` from measured peaks and machine facts: the rates of every unit that was
// measured, the memory bandwidth, the library GEMM ceiling and derived facts (the balance point in
// flops per byte, cache-resident tile sizes).
std::string hardware_summary_markdown(const PeakReport& peaks, const std::string& target,
                                      const MachineFacts& machine);
// The same with this_machine_facts().
std::string hardware_summary_markdown(const PeakReport& peaks, const std::string& target);

// $KBENCH_CONTEXT_DIR when set and non-empty, else the checkout's context/ (compiled in).
std::string default_context_dir();

}  // namespace kbench::agents
