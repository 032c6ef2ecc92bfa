// The fixed candidate build: read once, hash, compile to a temporary name, rename into the cache.
#include "harness/compiler.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "core/scratch_dir.h"
#include "core/sha256.h"
#include "harness/confined_command.h"
#include "harness/subprocess.h"

namespace kbench {
namespace fs = std::filesystem;

std::string candidate_compiler() {
  if (const char* cxx = std::getenv("KBENCH_CXX"); cxx && *cxx) return cxx;
  return KBENCH_CXX_COMPILER;
}

std::vector<std::string> candidate_flags() {
  std::vector<std::string> flags = {"-std=c++20",
                                    "-O3",
                                    "-march=native",
                                    "-DHWY_WANT_AVX3_DL",
                                    "-fPIC",
                                    "-shared",
                                    "-fopenmp",
                                    "-Wall",
                                    "-I" KBENCH_INCLUDE_DIR,
                                    "-I" KBENCH_OPENBLAS_INCLUDE_DIR};
  // oneMKL's headers after OpenBLAS's: it has no cblas.h of its own, so <cblas.h> stays OpenBLAS's.
  if (*KBENCH_MKL_INCLUDE_DIR) flags.push_back("-I" KBENCH_MKL_INCLUDE_DIR);

  // -DHWY_WANT_AVX3_DL: Highway 1.0.3 otherwise stops every file that includes hwy/highway.h with
  // "#error Logic error: best baseline should be included in dynamic targets" where -march=native
  // implies its AVX3_DL target (Sapphire Rapids and later); the reason is beside the same define in
  // the top-level CMakeLists.txt. Being a flag, it is part of the compile cache key.
  // -Wl,-z,defs turns an unresolved symbol into a build error here instead of a load failure later.
  flags.push_back("-Wl,-z,defs");
  return flags;
}

namespace {
// libmkl_rt after -lopenblas: a cblas_* name both define binds to OpenBLAS (the worker, like
// kbench, has OpenBLAS in its global scope); MKL's own names (cblas_gemm_bf16bf16f32, mkl_*) bind
// to MKL. docs/candidate-abi.md.
const std::vector<std::string> kLinkLibraries = [] {
  std::vector<std::string> libs = {"-lopenblas"};
  const std::string mkl_runtime = KBENCH_MKL_RUNTIME;
  if (!mkl_runtime.empty()) {
    const std::string dir = mkl_runtime.substr(0, mkl_runtime.rfind('/'));
    libs.insert(libs.end(), {mkl_runtime, "-Wl,-rpath," + dir});
  }
  libs.insert(libs.end(), {"-ldnnl", "-lhwy", "-lm"});
  return libs;
}();

// The build's confinement: a tool's (harness/confined_command.h), with the headers and libraries
// of the candidate command readable too.
Confinement build_confinement(const fs::path& work_dir) {
  std::vector<std::string> readable = {KBENCH_INCLUDE_DIR, KBENCH_OPENBLAS_INCLUDE_DIR};
  if (*KBENCH_MKL_INCLUDE_DIR) readable.push_back(KBENCH_MKL_INCLUDE_DIR);
  const std::string mkl_runtime = KBENCH_MKL_RUNTIME;
  if (!mkl_runtime.empty()) readable.push_back(mkl_runtime.substr(0, mkl_runtime.rfind('/')));
  return tool_confinement(candidate_compiler(), work_dir.string(), readable);
}

// Part of the cache key: an object built before the build was confined is never reused.
constexpr const char* kBuildRecipe = "confined build 2";  // 2: as root, under a user of its own

// The compiler's identity for the cache key: its first --version line (a compiler upgrade must not
// reuse objects built by the old one).
std::string compiler_identity() {
  static const std::string identity = [] {
    const CommandResult r = run_command({candidate_compiler(), "--version"}, 30);
    return candidate_compiler() + "\n" + r.output.substr(0, r.output.find('\n'));
  }();
  return identity;
}

// The candidate compiler run as candidates are built: the candidate flags (the link ones only
// when `link`), then `args`, then the link libraries when `link`. Diagnostics are the compiler's
// output, or why it did not run, after a line saying so where it ran out of time.
struct CompilerRun {
  bool ok = false;
  std::string diagnostics;
  std::vector<std::string> layers, missing;  // the build's confinement
};
CompilerRun run_candidate_compiler(const std::vector<std::string>& args, bool link,
                                   const fs::path& work_dir, double timeout_s) {
  std::vector<std::string> argv = {candidate_compiler()};
  for (const std::string& f : candidate_flags())
    if (link || (f != "-shared" && !f.starts_with("-Wl,"))) argv.push_back(f);
  argv.insert(argv.end(), args.begin(), args.end());
  if (link) argv.insert(argv.end(), kLinkLibraries.begin(), kLinkLibraries.end());
  const ConfinedResult r = run_confined(argv, build_confinement(work_dir), timeout_s);
  CompilerRun run{.layers = r.layers, .missing = r.missing};
  run.diagnostics = r.error.empty() ? r.output : r.error;
  if (r.timed_out)
    run.diagnostics = "compiler did not finish within " +
                      std::to_string(static_cast<int>(timeout_s)) + " s\n" + run.diagnostics;
  run.ok = !r.timed_out && r.exit_code == 0;
  return run;
}

// A build's own directory, or none with why in `diagnostics`: a build that cannot have one has
// failed, which its outcome says, as for every other failure; it is not an exception.
std::optional<ScratchDir> build_dir(const fs::path& root, const std::string& prefix,
                                    std::string& diagnostics) {
  try {
    return ScratchDir(root, prefix);
  } catch (const std::runtime_error& e) {
    diagnostics = e.what();
    return std::nullopt;
  }
}

}  // namespace

std::string candidate_command_line() {
  std::string line = candidate_compiler();
  for (const std::string& f : candidate_flags()) line += " " + f;
  line += " -o candidate.so candidate.cpp";
  for (const std::string& l : kLinkLibraries) line += " " + l;
  return line;
}

namespace {

// The bytes of the candidate at `path`, at most kMaxCandidateSourceBytes of them; nullopt, with
// the reason in `why`, where it cannot be read or is larger.
std::optional<std::string> read_candidate_source(const std::string& path, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in || fs::is_directory(path)) {
    why = "cannot read candidate source " + path;
    return std::nullopt;
  }
  std::string bytes;
  char chunk[1 << 16];
  while (bytes.size() <= kMaxCandidateSourceBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    bytes.append(chunk, static_cast<std::size_t>(in.gcount()));
  if (in.bad()) {
    why = "cannot read candidate source " + path;
    return std::nullopt;
  }
  if (bytes.size() > kMaxCandidateSourceBytes) {
    why = "candidate source " + path + " is larger than " +
          std::to_string(kMaxCandidateSourceBytes >> 20) + " MiB, the most kbench reads";
    return std::nullopt;
  }
  return bytes;
}

// Points diagnostics ("candidate.cpp:3:5: error: ...") at the user's file rather than at the
// compiler's private copy of it, named `copy` on the compiler's command line.
void name_the_users_file(std::string& diagnostics, const std::string& copy,
                         const std::string& source_path) {
  const std::string copy_at = copy + ":", source_at = source_path + ":";
  for (std::size_t at = diagnostics.find(copy_at); at != std::string::npos;
       at = diagnostics.find(copy_at, at + source_at.size()))
    diagnostics.replace(at, copy_at.size(), source_at);
}

}  // namespace

CompileOutcome compile_candidate(const std::string& source_path, const CompileOptions& options) {
  CompileOutcome out;
  std::optional<std::string> source = read_candidate_source(source_path, out.diagnostics);
  if (!source) return out;
  out.source = std::move(*source);

  std::string key = out.source + '\0' + compiler_identity() + '\0' + kBuildRecipe;
  for (const std::string& f : candidate_flags()) key += '\0' + f;
  for (const std::string& l : kLinkLibraries) key += '\0' + l;
  out.hash = sha256_hex(key);

  const fs::path dir = fs::path(options.cache_dir) / "so";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    out.diagnostics = "cannot create cache directory " + dir.string() + ": " + ec.message();
    return out;
  }
  const fs::path so = dir / (out.hash + ".so");
  out.so_path = so.string();
  if (fs::exists(so)) {
    out.ok = out.cached = true;
    return out;
  }
  // Compile the copy we hashed, not the user's path, which may change between read and compile, in
  // a directory of its own, the only one the build may write (its temporary files too): private to
  // this build, since the agents' pool compiles in several threads of one process, and beside the
  // cache, so that the object moves in by a rename.
  const std::optional<ScratchDir> build = build_dir(dir, "build", out.diagnostics);
  if (!build) return out;
  // The compiler starts in the build's directory and is given its files by name there.
  const std::string src_copy = "candidate.cpp", so_tmp = "candidate.so";
  {
    std::ofstream copy(build->path() / src_copy, std::ios::binary);
    copy << out.source;
    if (!copy) {
      out.diagnostics = "cannot write " + (build->path() / src_copy).string();
      return out;
    }
  }
  const CompilerRun r =
      run_candidate_compiler({"-o", so_tmp, src_copy}, true, build->path(), options.timeout_s);
  out.build_layers = r.layers;
  out.build_missing = r.missing;
  out.diagnostics = r.diagnostics;
  name_the_users_file(out.diagnostics, src_copy, source_path);
  if (r.ok) {
    // Atomic: a concurrent kbench sees the whole object or none.
    fs::rename(build->path() / so_tmp, so, ec);
    out.ok = !ec;
    if (ec) out.diagnostics += "cannot move the object into the cache: " + ec.message();
  }
  return out;
}

AssemblyOutcome candidate_assembly(const std::string& source_path, double timeout_s) {
  AssemblyOutcome out;
  const std::optional<std::string> source = read_candidate_source(source_path, out.diagnostics);
  if (!source) return out;
  // The compiler reads a private copy, as compile_candidate's does, named for the user's file so
  // that the debug lines name it. As C++ whatever the name's extension (eval takes any), and as
  // "./NAME", so that a name starting with '-' or '@' is not read as an option.
  const std::optional<ScratchDir> scratch =
      build_dir(fs::temp_directory_path(), "kbench-asm", out.diagnostics);
  if (!scratch) return out;
  const ScratchDir& dir = *scratch;
  const std::string name = fs::path(source_path).filename().string();
  const fs::path copy = dir.path() / name,
                 assembly = dir.path() / (name == "kernel.s" ? "kernel.out.s" : "kernel.s");
  {
    std::ofstream out_copy(copy, std::ios::binary);
    out_copy << *source;
  }
  const CompilerRun r = run_candidate_compiler(
      {"-g", "-S", "-o", assembly.filename().string(), "-x", "c++", "./" + name}, false, dir.path(),
      timeout_s);
  out.build_layers = r.layers;
  out.build_missing = r.missing;
  out.diagnostics = r.diagnostics;
  name_the_users_file(out.diagnostics, "./" + name, source_path);
  if (r.ok) {
    std::ifstream text(assembly);
    std::ostringstream buffer;
    buffer << text.rdbuf();
    out.assembly = buffer.str();
    out.ok = !out.assembly.empty();
  }
  return out;
}

CompileOutcome compile_assembly(const std::string& assembly, const std::string& extra_source,
                                const std::vector<std::string>& extra_flags,
                                const fs::path& build_dir, double timeout_s) {
  CompileOutcome out;
  out.source = assembly;
  const fs::path asm_path = build_dir / "kernel.s", extra_path = build_dir / "extra.cpp",
                 so = build_dir / "kernel.so";
  std::ofstream(asm_path) << assembly;
  std::ofstream(extra_path) << extra_source;
  std::vector<std::string> args = extra_flags;
  args.insert(args.end(), {"-o", so.filename().string(), asm_path.filename().string(),
                           extra_path.filename().string()});
  const CompilerRun r = run_candidate_compiler(args, true, build_dir, timeout_s);
  out.build_layers = r.layers;
  out.build_missing = r.missing;
  out.diagnostics = r.diagnostics;
  out.ok = r.ok;
  out.so_path = so.string();
  return out;
}

}  // namespace kbench
