#include "analysis/trip_counts.h"

#include <array>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "core/scratch_dir.h"
#include "core/text.h"
#include "harness/compiler.h"
#include "harness/single_call.h"

namespace kbench::analysis {
namespace {

constexpr std::string_view kCounters = "kbench_loop_trips";
constexpr std::string_view kRenamedEntry = "kbench_candidate_run";

bool reads_flags(std::string_view m) {
  if (m.starts_with('j')) return !m.starts_with("jmp");
  for (const std::string_view prefix : {"set", "cmov", "adc", "sbb", "rcl", "rcr", "pushf", "lahf"})
    if (m.starts_with(prefix)) return true;
  return false;
}

bool writes_flags(std::string_view m) {
  static constexpr std::array<std::string_view, 24> kIntegerOps = {
      "add",    "sub",   "cmp",   "test", "and", "or",   "xor",  "inc",
      "dec",    "neg",   "shl",   "shr",  "sar", "sal",  "imul", "bt",
      "popcnt", "tzcnt", "lzcnt", "bsf",  "bsr", "andn", "blsr", "blsi"};
  for (const std::string_view op : kIntegerOps) {
    if (!m.starts_with(op)) continue;
    const std::string_view suffix = m.substr(op.size());
    if (suffix.empty() || suffix == "b" || suffix == "w" || suffix == "l" || suffix == "q")
      return true;
  }
  return m.find("comis") != std::string_view::npos || m.starts_with("ptest") ||
         m.starts_with("vptest") || m.starts_with("kortest");
}

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// Every whole-word kb_run (including in kb_run._omp_fn.N, GCC's outlined OpenMP bodies) renamed.
std::string renamed_entry(std::string_view assembly) {
  std::string out;
  out.reserve(assembly.size());
  constexpr std::string_view kEntry = "kb_run";
  std::size_t from = 0;
  for (std::size_t at = assembly.find(kEntry); at != std::string_view::npos;
       at = assembly.find(kEntry, at + kEntry.size())) {
    const bool starts = at == 0 || !is_identifier_char(assembly[at - 1]);
    const std::size_t end = at + kEntry.size();
    const bool ends = end == assembly.size() || !is_identifier_char(assembly[end]);
    if (!starts || !ends) continue;
    out.append(assembly.substr(from, at - from));
    out.append(kRenamedEntry);
    from = end;
  }
  out.append(assembly.substr(from));
  return out;
}

}  // namespace

bool flags_live_at_entry(const std::vector<std::string>& instructions) {
  for (const std::string& instruction : instructions) {
    const std::string_view m = mnemonic_of(instruction);
    if (reads_flags(m)) return true;
    if (writes_flags(m)) return false;
  }
  return true;  // not written before the loop closes: assume they carry into it
}

// The instructions that add one to counter `index`. Where the loop reads the flags before it
// writes them, the increment's flags must not reach it: they are saved on the stack around it,
// below the 128-byte red zone that a leaf function may keep data in under its stack pointer (lea
// moves the stack pointer without touching the flags).
std::string counter_increment(std::size_t index, bool save_flags) {
  const std::string increment =
      "\tlock incq\t" + std::string(kCounters) + "+" + std::to_string(8 * index) + "(%rip)\n";
  if (!save_flags) return increment;
  return "\tleaq\t-128(%rsp), %rsp\n\tpushfq\n" + increment + "\tpopfq\n\tleaq\t128(%rsp), %rsp\n";
}

InstrumentedAssembly instrument(std::string_view assembly, const std::vector<AsmLoop>& loops) {
  InstrumentedAssembly out;
  std::map<std::string, std::size_t, std::less<>> counter_of;  // header label -> counter
  for (std::size_t i = 0; i < loops.size(); ++i) {
    out.saved_flags.push_back(flags_live_at_entry(loops[i].instructions));
    counter_of[loops[i].header_label + ":"] = i;
  }
  const std::string renamed = renamed_entry(assembly);
  std::string& text = out.assembly;
  text.reserve(renamed.size() + 64 * loops.size() + 256);
  for (const std::string_view line : split_lines(renamed)) {
    text.append(line);
    text += '\n';
    if (const auto found = counter_of.find(line); found != counter_of.end())
      text += counter_increment(found->second, out.saved_flags[found->second]);
  }
  const std::string bytes = std::to_string(8 * std::max<std::size_t>(loops.size(), 1));
  const std::string name(kCounters);
  text += "\t.globl\t" + name + "\n\t.hidden\t" + name + "\n\t.bss\n\t.align 64\n\t.type\t" + name +
          ", @object\n\t.size\t" + name + ", " + bytes + "\n" + name + ":\n\t.zero\t" + bytes +
          "\n";
  return out;
}

std::string trip_count_wrapper(std::size_t loops) {
  const std::string n = std::to_string(std::max<std::size_t>(loops, 1));
  return R"(#include <cstring>
#include "kbench/kernel.h"
extern "C" int )" +
         std::string(kRenamedEntry) +
         R"((const kb_config*, const kb_tensor*, int32_t, kb_tensor*, int32_t);
extern "C" long long )" +
         std::string(kCounters) + "[" + n + R"(];
// The candidate's kb_run, then its loops' counters over its outputs' bytes, output by output.
extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  const int rc = )" +
         std::string(kRenamedEntry) + R"((cfg, inputs, num_inputs, outputs, num_outputs);
  if (rc != 0) return rc;
  const char* counts = reinterpret_cast<const char*>()" +
         std::string(kCounters) + R"();
  size_t left = sizeof(long long) * )" +
         n + R"(;
  for (int32_t o = 0; o < num_outputs && left > 0; ++o) {
    const size_t element = outputs[o].dtype == KB_BF16 ? 2 : 4;
    size_t bytes = static_cast<size_t>(kb_numel(&outputs[o])) * element;
    if (bytes > left) bytes = left;
    std::memcpy(outputs[o].data, counts, bytes);
    counts += bytes;
    left -= bytes;
  }
  return 0;  // kbench checks that the outputs held every counter
}
)";
}

std::vector<std::int64_t> count_trips(std::string_view assembly, const std::vector<AsmLoop>& loops,
                                      const EvalOptions& options, std::uint64_t seed,
                                      std::vector<ConfinedStep>& steps) {
  std::vector<std::int64_t> trips(loops.size());
  if (loops.empty()) return trips;
  const InstrumentedAssembly instrumented = instrument(assembly, loops);
  const ScratchDir build_dir(std::filesystem::temp_directory_path(), "kbench-trips");
  const CompileOutcome built = compile_assembly(
      instrumented.assembly, trip_count_wrapper(loops.size()), {}, build_dir.path(), 120);
  record_step(steps, "instrumented build", {built.build_layers, built.build_missing});
  if (!built.ok)
    throw std::runtime_error("the instrumented build failed: " + built.diagnostics.substr(0, 400));
  const CandidateCalls calls = call_candidate(options, built.so_path, seed, 1);
  if (calls.sandbox) record_step(steps, "instrumented run", *calls.sandbox);
  if (!calls.ok()) throw std::runtime_error("the instrumented run failed: " + calls.error);
  std::vector<std::byte> bytes;
  for (const auto& output : calls.outputs) bytes.insert(bytes.end(), output.begin(), output.end());
  if (bytes.size() < 8 * loops.size())
    throw std::runtime_error("the outputs are too small to carry the loops' counters");
  for (std::size_t i = 0; i < loops.size(); ++i)
    std::memcpy(&trips[i], bytes.data() + 8 * i, sizeof trips[i]);
  return trips;
}

}  // namespace kbench::analysis
