// Compiles a candidate with kbench's one fixed command and caches the shared object by the content
// hash of (source, compiler identity, flags).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kbench {

struct CompileOptions {
  std::string cache_dir;   // where <hash>.so files live; created if missing
  double timeout_s = 120;  // a source that makes the compiler hang (#include "/dev/zero") ends here
};

struct CompileOutcome {
  bool ok = false;
  bool cached = false;
  std::string so_path;
  std::string source;       // exactly the bytes compiled and hashed
  std::string hash;         // sha256 hex
  std::string diagnostics;  // compiler output (warnings or errors), or why it could not run
  // The build's confinement (docs/security.md, "The build"), when this call built the object; a
  // cached object was built by the same confined build (its version is part of the cache key).
  std::vector<std::string> build_layers, build_missing;
};

// The compiler executable: $KBENCH_CXX, else the C++ compiler kbench was built with.
std::string candidate_compiler();
// The fixed flags, documented in docs/candidate-abi.md; the source and output paths come after
// them.
std::vector<std::string> candidate_flags();
// One line for docs and `kbench scaffold`: the full command with placeholders.
std::string candidate_command_line();

// The largest candidate source kbench reads: past any kernel written by hand or by a model (the
// largest expert file is 38 KB), and small enough that a record keeps its source whole. A larger
// file would cost its whole size in memory, in the cache key and in every record of it.
inline constexpr std::uintmax_t kMaxCandidateSourceBytes = 4u << 20;

// Reads `source_path` once and compiles those bytes, the build confined
// (harness/confined_command.h). Never throws for a bad source; an unreadable path, or a source
// over kMaxCandidateSourceBytes, gives ok=false with the reason in diagnostics.
CompileOutcome compile_candidate(const std::string& source_path, const CompileOptions& options);

// A shared object built from `assembly` (a candidate's, changed by a tool: instrumented) and
// `extra_source` (C++ compiled with the candidate flags beside it), linked as candidates are, in
// `build_dir`, the caller's (a ScratchDir: the only directory the build may write), where so_path
// stays as long as the caller keeps it.
CompileOutcome compile_assembly(const std::string& assembly, const std::string& extra_source,
                                const std::vector<std::string>& extra_flags,
                                const std::filesystem::path& build_dir, double timeout_s);

struct AssemblyOutcome {
  bool ok = false;
  std::string assembly;     // the compiler's assembly, with the .loc lines of -g
  std::string diagnostics;  // compiler output, or why it could not run
  std::vector<std::string> build_layers, build_missing;  // as CompileOutcome's
};

// The assembly of `source_path` compiled as compile_candidate compiles it (the same flags, with -g,
// which leaves the code unchanged and adds the source lines), for reading its machine code.
AssemblyOutcome candidate_assembly(const std::string& source_path, double timeout_s);

}  // namespace kbench
