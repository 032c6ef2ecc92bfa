// The innermost loops of a compiled kernel, read off the compiler's assembly (GCC or Clang, AT&T
// syntax, compiled with -g so that .loc directives name each instruction's source line). A loop is
// a backward branch to a label of the same function; an innermost loop holds no other loop.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kbench::analysis {

struct SourceLine {
  std::string file;  // as the assembly's .file directive names it
  int line = 0;
  friend bool operator==(const SourceLine&, const SourceLine&) = default;
  friend auto operator<=>(const SourceLine&, const SourceLine&) = default;
};

struct AsmLoop {
  std::string function;                   // the enclosing symbol, demangled
  std::string header_label;               // the label the back edge jumps to
  std::vector<std::string> instructions;  // header to back edge, one per line, as assembled
  std::vector<SourceLine> lines;          // distinct source lines of those instructions, sorted
  // Widest vector register the body names: 512 (zmm), 256 (ymm), 128 (packed xmm), 0 (scalar).
  int vector_bits = 0;
  bool uses_amx = false;  // tile registers or tile instructions, which llvm-mca does not model
  bool has_call = false;  // a call inside the body: the callee's cost is not in the loop's
};

// An instruction's mnemonic: "vfmadd231ps" of "vfmadd231ps\t%ymm0, %ymm1, %ymm2".
std::string_view mnemonic_of(std::string_view instruction);

// Every innermost loop of `assembly`, in the order the assembly lays them out.
std::vector<AsmLoop> innermost_loops(std::string_view assembly);

}  // namespace kbench::analysis
