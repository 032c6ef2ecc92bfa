#include "analysis/asm_loops.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "core/text.h"

namespace kbench::analysis {
namespace {

struct Instruction {
  std::string text;  // mnemonic and operands, white space as the compiler wrote it
  int function = -1;
  std::optional<SourceLine> line;
};

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::string_view operands_of(std::string_view instruction) {
  const auto gap = instruction.find_first_of(" \t");
  return gap == std::string_view::npos ? std::string_view{} : trim(instruction.substr(gap));
}

std::string demangled(const std::string& symbol) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) : symbol;
}

// The file a `.file N ...` directive names: its last quoted string (DWARF 5 writes a directory
// and a name, older versions the name alone).
std::optional<std::pair<int, std::string>> file_directive(std::string_view args) {
  const auto space = args.find_first_of(" \t");
  if (space == std::string_view::npos) return std::nullopt;
  const std::string number(args.substr(0, space));
  if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const auto close = args.rfind('"');
  if (close == std::string_view::npos || close == 0) return std::nullopt;
  const auto open = args.rfind('"', close - 1);
  if (open == std::string_view::npos) return std::nullopt;
  return std::pair{std::stoi(number), std::string(args.substr(open + 1, close - open - 1))};
}

// `.loc FILE LINE [COLUMN] [options]`: the file number and line.
std::optional<std::pair<int, int>> loc_directive(std::string_view args) {
  int file = 0, line = 0;
  if (std::sscanf(std::string(args).c_str(), "%d %d", &file, &line) != 2) return std::nullopt;
  return std::pair{file, line};
}

int vector_bits_of(std::string_view instruction) {
  if (instruction.find("%zmm") != std::string_view::npos) return 512;
  if (instruction.find("%ymm") != std::string_view::npos) return 256;
  if (instruction.find("%xmm") == std::string_view::npos) return 0;
  // xmm registers also carry scalar float arithmetic (vaddss, vfmadd231sd): packed only where the
  // mnemonic says so.
  std::string_view m = mnemonic_of(instruction);
  if (m.starts_with('v')) m.remove_prefix(1);
  const bool packed = m.ends_with("ps") || m.ends_with("pd") || m.starts_with('p');
  return packed ? 128 : 0;
}

bool is_amx(std::string_view instruction) {
  const std::string_view m = mnemonic_of(instruction);
  return instruction.find("%tmm") != std::string_view::npos || m.starts_with("tile") ||
         m.starts_with("tdp") || m.starts_with("tcmmul");
}

}  // namespace

std::string_view mnemonic_of(std::string_view instruction) {
  return instruction.substr(0, instruction.find_first_of(" \t"));
}

std::vector<AsmLoop> innermost_loops(std::string_view assembly) {
  std::vector<Instruction> instructions;
  std::vector<std::string> functions;
  std::vector<std::map<std::string, std::size_t, std::less<>>> labels;  // per function
  std::map<int, std::string> files;
  std::optional<SourceLine> current_line;

  for (const std::string_view raw : split_lines(assembly)) {
    const std::string_view line = trim(raw);
    if (line.empty() || line.starts_with('#')) continue;
    if (!raw.starts_with(' ') && !raw.starts_with('\t') && line.ends_with(':')) {
      const std::string label(line.substr(0, line.size() - 1));
      if (!label.starts_with('.')) {  // a symbol: GCC's and Clang's local labels start with '.'
        functions.push_back(label);
        labels.emplace_back();
        current_line.reset();
      } else if (!labels.empty()) {
        labels.back()[label] = instructions.size();
      }
      continue;
    }
    if (line.starts_with('.')) {
      const std::string_view name = line.substr(0, line.find_first_of(" \t"));
      const std::string_view args = trim(line.substr(name.size()));
      if (name == ".file") {
        if (const auto f = file_directive(args)) files[f->first] = f->second;
      } else if (name == ".loc") {
        if (const auto l = loc_directive(args))
          current_line = SourceLine{files.contains(l->first) ? files[l->first] : "?", l->second};
      }
      continue;
    }
    if (functions.empty()) continue;
    instructions.push_back(
        {std::string(line), static_cast<int>(functions.size()) - 1, current_line});
  }

  // Back edges: a jump to a label of the same function at or before the jump. One loop per
  // header, reaching its last back edge.
  std::map<std::pair<int, std::size_t>, std::pair<std::size_t, std::string>> loops;
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& inst = instructions[i];
    if (!mnemonic_of(inst.text).starts_with('j')) continue;
    const std::string_view target = operands_of(inst.text);
    const auto& own = labels[static_cast<std::size_t>(inst.function)];
    const auto found = own.find(target);
    if (found == own.end() || found->second > i) continue;
    auto& loop = loops[{inst.function, found->second}];
    if (loop.second.empty() || i > loop.first) loop = {i, std::string(target)};
  }

  std::vector<AsmLoop> innermost;
  for (const auto& [key, value] : loops) {
    const auto [function, first] = key;
    const std::size_t last = value.first;
    const bool holds_another = std::any_of(loops.begin(), loops.end(), [&](const auto& other) {
      const std::size_t other_first = other.first.second, other_last = other.second.first;
      return other.first.first == function && other.first != key && other_first >= first &&
             other_last <= last;
    });
    if (holds_another) continue;
    AsmLoop loop;
    loop.function = demangled(functions[static_cast<std::size_t>(function)]);
    loop.header_label = value.second;
    std::set<SourceLine> lines;
    for (std::size_t i = first; i <= last; ++i) {
      const Instruction& inst = instructions[i];
      loop.instructions.push_back(inst.text);
      if (inst.line && inst.line->line > 0) lines.insert(*inst.line);
      loop.vector_bits = std::max(loop.vector_bits, vector_bits_of(inst.text));
      loop.uses_amx = loop.uses_amx || is_amx(inst.text);
      loop.has_call = loop.has_call || mnemonic_of(inst.text).starts_with("call");
    }
    loop.lines.assign(lines.begin(), lines.end());
    innermost.push_back(std::move(loop));
  }
  return innermost;
}

}  // namespace kbench::analysis
