// The context artifact: every target loads within its size bound, its menu parses, its examples
// compile with the candidate command, errors name what is missing, and the hardware summary carries
// the measured numbers.
#include "agents/context_artifact.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/compiler.h"
#include "harness/subprocess.h"

namespace kbench::agents {
namespace {
namespace fs = std::filesystem;

const std::string kContextDir = std::string(KBENCH_SOURCE_DIR) + "/context";

// The artifact is read whole by a small model with a 32k-token window: a target's files together
// must leave room for the task and the reply (40 KiB is ~10k tokens), and be more than a stub.
constexpr std::size_t kMinBytes = 16 * 1024, kMaxBytes = 40 * 1024;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kbench-context-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ContextArtifact, EveryTargetLoadsInPromptOrderWithinTheSizeBound) {
  const std::vector<std::string> parts = {"hardware", "rules", "api", "menu", "examples"};
  ASSERT_EQ(context_targets(), (std::vector<std::string>{"avx2", "avx512", "avx512-bf16", "amx"}));
  for (const std::string& target : context_targets()) {
    SCOPED_TRACE(target);
    const ContextArtifact a = load_context(kContextDir, target);
    EXPECT_EQ(a.target, target);
    // Files follow the part order; within a part, common/ comes before the target's own file.
    std::size_t part = 0;
    for (const ContextFile& f : a.files) {
      const std::string stem = fs::path(f.name).stem().string();
      while (part < parts.size() && parts[part] != stem) ++part;
      ASSERT_LT(part, parts.size()) << f.name << " is out of order";
      EXPECT_TRUE(f.name.rfind("common/", 0) == 0 || f.name.rfind(target + "/", 0) == 0) << f.name;
      EXPECT_FALSE(f.text.empty()) << f.name;
    }
    for (const std::string& p : {std::string("hardware"), std::string("api"), std::string("menu"),
                                 std::string("examples")})
      EXPECT_TRUE(
          std::any_of(a.files.begin(), a.files.end(),
                      [&](const ContextFile& f) { return f.name == target + "/" + p + ".md"; }))
          << "no target-specific " << p << ".md";
    EXPECT_GE(a.bytes(), kMinBytes);
    EXPECT_LE(a.bytes(), kMaxBytes);
    std::cout << "[ context  ] " << target << ": " << a.files.size() << " files, " << a.bytes()
              << " bytes (~" << a.bytes() / 4 << " tokens)\n";

    const std::string prompt = context_prompt_text(a);
    std::size_t last = 0;
    for (const ContextFile& f : a.files) {
      const std::size_t at = prompt.find("# Context file: " + f.name + "\n");
      ASSERT_NE(at, std::string::npos) << f.name;
      EXPECT_GE(at, last) << f.name;
      last = at;
    }
  }
}

TEST(ContextArtifact, MenuOfEveryTargetHasTwelveToTwentyStrategies) {
  for (const std::string& target : context_targets()) {
    SCOPED_TRACE(target);
    const std::vector<std::string> menu = optimization_menu(load_context(kContextDir, target));
    EXPECT_GE(menu.size(), 12u);
    EXPECT_LE(menu.size(), 20u);
    for (const std::string& entry : menu) {
      EXPECT_GT(entry.size(), 20u) << entry;  // a strategy, not a stray word
      EXPECT_NE(entry.rfind("- ", 0), 0u) << entry;
    }
  }
}

TEST(ContextArtifact, MenuIsOnlyTheBulletsUnderTheMenuHeading) {
  ContextArtifact a{"avx512", "/nowhere", {}};
  a.files.push_back({"avx512/menu.md",
                     "# Title\n- not a strategy\n## Menu\n\n- first plan  \n  - nested, skipped\n"
                     "text\n- second plan\n## Notes\n- after the menu\n"});
  a.files.push_back({"avx512/api.md", "## Menu\n- api files do not count\n"});
  EXPECT_EQ(optimization_menu(a), (std::vector<std::string>{"first plan", "second plan"}));
}

TEST(ContextArtifact, ExampleSourcesAreTheCodeFencesThatDefineKbRun) {
  ContextArtifact a{"avx2", "/nowhere", {}};
  a.files.push_back(
      {"avx2/examples.md",
       "```text\nkb_run( in a text fence\n```\n```cpp\nint helper();\n```\n"
       "```cpp\nextern \"C\" int kb_run(int);\n```\n```c\nint kb_run(void) {}\n```\n"});
  a.files.push_back({"avx2/api.md", "```cpp\nint kb_run(int);\n```\n"});
  EXPECT_EQ(example_sources(a),
            (std::vector<std::string>{"extern \"C\" int kb_run(int);\n", "int kb_run(void) {}\n"}));
}

TEST(ContextArtifact, ErrorsNameTheTargetDirectoryOrPart) {
  const std::string unknown = error_of([] { load_context(kContextDir, "neon"); });
  EXPECT_NE(unknown.find("unknown context target 'neon'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("avx512-bf16"), std::string::npos) << unknown;

  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string missing = error_of([&] { load_context(tmp.path().string(), "avx2"); });
  EXPECT_NE(missing.find((tmp.path() / "avx2").string()), std::string::npos) << missing;
  EXPECT_NE(missing.find("missing"), std::string::npos) << missing;
  EXPECT_EQ(missing.find('\n'), std::string::npos) << "one line";

  write_file(tmp.path() / "avx2" / "hardware.md", "# hw\n");
  write_file(tmp.path() / "common" / "rules.md", "# rules\n");
  write_file(tmp.path() / "avx2" / "api.md", "# api\n");
  const std::string no_menu = error_of([&] { load_context(tmp.path().string(), "avx2"); });
  EXPECT_NE(no_menu.find("no menu.md"), std::string::npos) << no_menu;

  write_file(tmp.path() / "avx2" / "menu.md", "## Menu\n- a strategy\n");
  fs::create_directories(tmp.path() / "avx2" / "examples.md");  // a directory: unreadable
  const std::string unreadable = error_of([&] { load_context(tmp.path().string(), "avx2"); });
  EXPECT_NE(unreadable.find("cannot read context file"), std::string::npos) << unreadable;
  EXPECT_NE(unreadable.find("examples.md"), std::string::npos) << unreadable;

  fs::remove(tmp.path() / "avx2" / "examples.md");
  write_file(tmp.path() / "common" / "examples.md", "no code\n");
  const ContextArtifact a = load_context(tmp.path().string(), "avx2");
  ASSERT_EQ(a.files.size(), 5u);
  EXPECT_EQ(a.files[1].name, "common/rules.md");
  EXPECT_EQ(a.files[4].name, "common/examples.md");
  EXPECT_EQ(a.bytes(),
            std::string("# hw\n# rules\n# api\n## Menu\n- a strategy\nno code\n").size());
}

TEST(ContextArtifact, HardwareSummaryCarriesTheMeasuredNumbers) {
  PeakReport peaks;
  peaks.threads = 2;
  peaks.fp32_fma_gflops = 178.06;
  peaks.bf16_dot_gflops = 401.5;
  peaks.amx_bf16_gflops = 2998.25;
  peaks.library_gemm_gflops = 1500.0;
  peaks.library_gemm_method = "onednn_bf16 2048^3";
  peaks.library_gemm_paths = {{"onednn_bf16", 1500.0}, {"openblas_sgemm", 99.5}};
  peaks.mem_bw_gbps = 6.07;
  peaks.isa_used = "fp32:avx512f bf16:avx512_bf16 amx:amx_bf16 mem:triad";
  peaks.methods = {{"fp32_fma", "avx512f vfmadd231ps zmm"}, {"mem_bw", "STREAM triad"}};
  MachineFacts machine;
  machine.cpu_model = "Test CPU 9000";
  machine.isa_flags = "avx2 fma avx512f amx_bf16";
  machine.logical_cpus = 2;
  machine.l1d_bytes = 48 * 1024;
  machine.l2_bytes = 2 * 1024 * 1024;
  machine.l3_bytes = 105 * 1024 * 1024;
  machine.l3_shared_by = 56;
  const std::string md = hardware_summary_markdown(peaks, "amx", machine);
  for (const char* expected : {"# Hardware: amx (measured",
                               "Test CPU 9000, 2 logical CPUs",
                               "avx2 fma avx512f amx_bf16",
                               "L1d 48 KiB per core",
                               "L2 2 MiB per core",
                               "L3 105 MiB shared by 56 logical CPUs",
                               "## Measured peaks (2 threads)",
                               "| fp32 FMA | 178.1 | avx512f vfmadd231ps zmm |",
                               "| bf16 dot (vdpbf16ps) | 401.5 |",
                               "| AMX bf16 (tdpbf16ps) | 2998.2 |",
                               "| library bf16 GEMM (best path) | 1500.0 | onednn_bf16 2048^3 |",
                               "| library GEMM path openblas_sgemm | 99.5 |",
                               "Memory bandwidth: 6.1 GB/s (STREAM triad)",
                               "bf16 matmul peak: 2998.2 GFLOP/s on amx_bf16",
                               "reaches 50% of that peak",                         // 1500 / 2998.25
                               "Balance point: 29.3 flops/byte at fp32 FMA peak",  // 178.06 / 6.07
                               "493.9 flops/byte at the bf16 matmul peak",         // 2998.25 / 6.07
                               "1 GiB moved takes at least 176.9 ms",  // 1.073741824 / 6.07
                               "Per thread: 89.0 GFLOP/s",
                               "L1d holds 12288 f32",
                               "## Published (not measured)",
                               "tdpbf16ps"})
    EXPECT_NE(md.find(expected), std::string::npos) << "missing: " << expected << "\n" << md;
  EXPECT_NE(md.find("| fp16 FMA (vfmadd*ph) | not available | no avx512_fp16 |"), std::string::npos)
      << md;

  PeakReport plain;  // an AVX2 machine: no bf16 units, nothing but fp32 and memory
  plain.fp32_fma_gflops = 64;
  plain.mem_bw_gbps = 8;
  const std::string md2 = hardware_summary_markdown(plain, "avx2", MachineFacts{});
  EXPECT_NE(md2.find("bf16 matmul peak: 64.0 GFLOP/s on fp32_fma"), std::string::npos) << md2;
  EXPECT_NE(md2.find("Balance point: 8.0 flops/byte at fp32 FMA peak."), std::string::npos) << md2;
  EXPECT_NE(md2.find("Caches: unknown"), std::string::npos) << md2;
  EXPECT_EQ(md2.find("library bf16 GEMM"), std::string::npos) << md2;
  EXPECT_EQ(md2.find("Per thread"), std::string::npos) << md2;
  EXPECT_EQ(md2.find("is slower here than fp32 FMA"), std::string::npos) << md2;
  EXPECT_EQ(md.find("is slower here than fp32 FMA"), std::string::npos) << md;

  // Emerald Rapids without AMX: the dot-product unit at half the fp32 FMA rate.
  PeakReport slow_dot = plain;
  slow_dot.fp32_fma_gflops = 171.1;
  slow_dot.bf16_dot_gflops = 85.3;
  const std::string md3 = hardware_summary_markdown(slow_dot, "avx512-bf16", MachineFacts{});
  EXPECT_NE(md3.find("bf16 matmul peak: 171.1 GFLOP/s on fp32_fma"), std::string::npos) << md3;
  EXPECT_NE(md3.find("vdpbf16ps (85.3 GFLOP/s) is slower here than fp32 FMA"), std::string::npos)
      << md3;

  EXPECT_NE(error_of([&] {
              hardware_summary_markdown(plain, "neon", MachineFacts{});
            }).find("unknown context target"),
            std::string::npos);
}

TEST(ContextArtifact, ThisMachineFactsAndTargetAreConsistentWithCpuinfo) {
  const std::string target = detect_target();
  const auto& targets = context_targets();
  ASSERT_NE(std::find(targets.begin(), targets.end(), target), targets.end()) << target;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  const bool avx512 =
      text.find(" avx512bw") != std::string::npos && text.find(" avx512vl") != std::string::npos;
  EXPECT_EQ(target != "avx2", avx512) << target;
  if (avx512) {
    EXPECT_EQ(target == "avx512-bf16" || target == "amx",
              text.find(" avx512_bf16") != std::string::npos)
        << target;
  }
  const MachineFacts facts = this_machine_facts();
  EXPECT_FALSE(facts.cpu_model.empty());
  EXPECT_GT(facts.logical_cpus, 0);
  EXPECT_GT(facts.l1d_bytes, 0);
}

TEST(ContextArtifact, DefaultDirectoryIsTheCheckoutsUnlessTheEnvironmentSaysOtherwise) {
  unsetenv("KBENCH_CONTEXT_DIR");
  EXPECT_EQ(fs::path(default_context_dir()), fs::path(kContextDir));
  setenv("KBENCH_CONTEXT_DIR", "/elsewhere/context", 1);
  EXPECT_EQ(default_context_dir(), "/elsewhere/context");
  setenv("KBENCH_CONTEXT_DIR", "", 1);
  EXPECT_EQ(fs::path(default_context_dir()), fs::path(kContextDir));
  unsetenv("KBENCH_CONTEXT_DIR");
}

// Adds every identifier of every header a source including `includes` reads to `declared`, found
// through the candidate compiler's own dependency list (-M) under the candidate's -I flags; a fatal
// failure if the compiler cannot list them or lists `more_headers_than` headers or fewer.
void add_identifiers_of_headers(const fs::path& dir, const std::string& includes,
                                std::size_t more_headers_than, std::set<std::string>* declared) {
  const fs::path probe = dir / "includes.cpp";
  write_file(probe, includes);
  std::vector<std::string> argv = {candidate_compiler()};
  for (const std::string& f : candidate_flags())
    if (f.rfind("-I", 0) == 0 || f.rfind("-std", 0) == 0 || f == "-fopenmp") argv.push_back(f);
  argv.insert(argv.end(), {"-M", probe.string()});
  const CommandResult deps = run_command(argv, 120, 1 << 20);
  ASSERT_EQ(deps.exit_code, 0) << includes << deps.error << deps.output;
  std::size_t headers = 0;
  std::istringstream paths(deps.output);
  for (std::string path; paths >> path;) {
    if (path == "\\" || path.back() == ':' || path == probe.string() || !fs::is_regular_file(path))
      continue;
    ++headers;
    // A plain scan: a regex over megabytes of headers is slow.
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string word;
    for (const char c : text + " ") {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
        word += c;
      } else if (!word.empty()) {
        declared->insert(word);
        word.clear();
      }
    }
  }
  ASSERT_GT(headers, more_headers_than) << deps.output.substr(0, 2000);
}

// The artifact's text without its oneMKL section: a build without oneMKL has no MKL headers to
// check those names against (and the artifact's hardware section says oneMKL is not available).
std::string without_mkl_section(const std::string& text) {
  const std::size_t begin = text.find("\n## oneMKL");
  if (begin == std::string::npos) return text;
  const std::size_t end = text.find("\n## ", begin + 1);
  return text.substr(0, begin) + (end == std::string::npos ? "" : text.substr(end));
}

// An API the artifact names but the headers lack would teach the model code that cannot compile:
// every intrinsic (_mm*, _tile_*, _MM_*, _CMP_*), BLAS (cblas_*, openblas_*), OpenMP (omp_*) and
// oneDNN name (DNNL_ARG_*, the parts of dnnl::a::b) must be an identifier of the headers a
// candidate includes. OpenBLAS's <cblas.h> and oneMKL's <mkl_cblas.h> cannot share a file (their
// enums collide), so each is read by its own probe.
TEST(ContextArtifact, EveryApiNameExistsInTheHeadersCandidatesCompileAgainst) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  std::set<std::string> declared;
  ASSERT_NO_FATAL_FAILURE(
      add_identifiers_of_headers(tmp.path(),
                                 "#include <immintrin.h>\n#include <omp.h>\n#include <cblas.h>\n"
                                 "#include <oneapi/dnnl/dnnl.hpp>\n",
                                 50, &declared));
  const bool build_has_mkl = std::string(KBENCH_MKL_RUNTIME) != "";
  if (build_has_mkl) {
    ASSERT_NO_FATAL_FAILURE(
        add_identifiers_of_headers(tmp.path(), "#include <mkl_cblas.h>\n", 0, &declared));
  }
  const std::regex api_name(
      R"(\b(_mm(256|512)?_[a-z0-9_]+|_tile_[a-z0-9_]+|_MM_[A-Z0-9_]+|_CMP_[A-Z0-9_]+|)"
      R"(cblas_[a-z0-9_]+|openblas_[a-z0-9_]+|omp_[a-z_]+|DNNL_ARG_[A-Z0-9_]+|dnnl(::[a-z0-9_]+)+))");
  std::set<std::string> names;
  for (const std::string& target : context_targets())
    for (const ContextFile& f : load_context(kContextDir, target).files) {
      // hardware.md names kbench's GEMM paths (openblas_sgemm, onednn_bf16), not APIs.
      if (f.name.find("/hardware.md") != std::string::npos) continue;
      const std::string text = build_has_mkl ? f.text : without_mkl_section(f.text);
      for (std::sregex_iterator it(text.begin(), text.end(), api_name), end; it != end; ++it) {
        std::string n = it->str();
        if (n.rfind("dnnl::", 0) != 0) {
          names.insert(n);
          continue;
        }
        for (std::size_t at = 0; (at = n.find("::")) != std::string::npos;) {
          names.insert(n.substr(0, at));
          n = n.substr(at + 2);
        }
        names.insert(n);
      }
    }
  EXPECT_GT(names.size(), 150u);
  for (const std::string& n : names)
    EXPECT_TRUE(declared.count(n)) << n << " is not declared by the candidate's headers";
}

// Every example is a complete candidate: it compiles with the fixed candidate command. Targets this
// machine is not (older or newer ISA) get their -march flag added after -march=native, so the
// compile checks the example against that target's ISA (compile and link only; it does not run).
TEST(ContextArtifact, EveryExampleCompilesWithTheCandidateCommand) {
  const std::string here = detect_target();
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  int compiled = 0;
  bool common_done = false;
  for (const std::string& target : context_targets()) {
    ContextArtifact a = load_context(kContextDir, target);
    // The common examples are the same for every target: compile them once, natively.
    if (common_done)
      a.files.erase(
          std::remove_if(a.files.begin(), a.files.end(),
                         [](const ContextFile& f) { return f.name.rfind("common/", 0) == 0; }),
          a.files.end());
    common_done = true;
    const std::vector<std::string> sources = example_sources(a);
    EXPECT_GE(sources.size(), 2u) << target;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      SCOPED_TRACE(target + " example " + std::to_string(i));
      const fs::path src = tmp.path() / (target + "_" + std::to_string(i) + ".cpp");
      write_file(src, sources[i]);
      std::vector<std::string> argv = {candidate_compiler()};
      for (const std::string& f : candidate_flags()) argv.push_back(f);
      if (target != here) argv.push_back(target_march_flag(target));
      argv.insert(argv.end(), {"-o", src.string() + ".so", src.string(), "-lopenblas", "-ldnnl",
                               "-lhwy", "-lm"});
      const CommandResult r = run_command(argv, 300);
      EXPECT_EQ(r.exit_code, 0) << r.error << r.output.substr(0, 4000);
      EXPECT_TRUE(fs::exists(src.string() + ".so"));
      ++compiled;
    }
  }
  EXPECT_GE(compiled, 8);
}

}  // namespace
}  // namespace kbench::agents
