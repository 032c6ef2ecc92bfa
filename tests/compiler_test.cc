// compile_candidate: the build's confinement is reported, the build's directory never outlives it,
// and directories that killed kbench processes left behind are removed by the next build.
#include "harness/compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "proc_support.h"
#include "scratch_dir_support.h"
#include "temp_dir_test.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

class Compiler : public testing::TempDirTest {
 protected:
  void SetUp() override {
    source_ = root() / "kernel.cpp";
    std::ofstream(source_)
        << "#include \"kbench/kernel.h\"\n"
           "extern \"C\" int kb_run(const kb_config*, const kb_tensor*, int32_t,\n"
           "                        kb_tensor*, int32_t) { return 0; }\n";
  }

  // The build directories in the cache's object directory.
  std::vector<std::string> builds() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(root() / "cache" / "so"))
      if (entry.path().filename().string().starts_with("build-"))
        names.push_back(entry.path().filename().string());
    return names;
  }

  fs::path source_;
};

TEST_F(Compiler, BuildsConfinedAndLeavesOnlyTheObject) {
  const CompileOutcome built = compile_candidate(source_.string(), {(root() / "cache").string()});
  ASSERT_TRUE(built.ok) << built.diagnostics;
  EXPECT_FALSE(built.cached);
  EXPECT_TRUE(fs::exists(built.so_path));
  EXPECT_TRUE(builds().empty()) << "the build's directory outlived it";
  const auto has_layer = [&](const std::string& layer) {
    return std::find(built.build_layers.begin(), built.build_layers.end(), layer) !=
           built.build_layers.end();
  };
  EXPECT_TRUE(has_layer("build_environment_allowlist"));
  EXPECT_TRUE(has_layer("build_resource_limits"));
  if (kbench::testing::kernel_has_landlock()) {
    EXPECT_TRUE(has_layer("build_landlock_files"));
  }
  // As root, the compiler ran as a user of its own, though the cache lies in this test's directory
  // (mode 0700, as /root is): it starts in the build's directory, given its files by name there.
  // The object it made is root's again before it enters the cache.
  if (geteuid() == 0) {
    EXPECT_TRUE(has_layer("build_unprivileged_user"));
    struct stat object {};
    ASSERT_EQ(stat(built.so_path.c_str(), &object), 0);
    EXPECT_EQ(object.st_uid, 0u);
    EXPECT_EQ(object.st_gid, 0u);
  }

  const CompileOutcome again = compile_candidate(source_.string(), {(root() / "cache").string()});
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.so_path, built.so_path);
}

// The worker, as a user of its own, reopens the object through /proc/self/fd: it must be readable
// by others whatever kbench's umask (under 077 every evaluation by root failed to load).
TEST_F(Compiler, TheObjectIsReadableByOthersWhateverTheUmask) {
  const mode_t saved = umask(077);
  const CompileOutcome built = compile_candidate(source_.string(), {(root() / "cache").string()});
  umask(saved);
  ASSERT_TRUE(built.ok) << built.diagnostics;
  struct stat object {};
  ASSERT_EQ(stat(built.so_path.c_str(), &object), 0);
  EXPECT_EQ(object.st_mode & 0444, 0444u) << std::oct << object.st_mode;
}

TEST_F(Compiler, DiagnosticsNameTheUsersFile) {
  std::ofstream(source_) << "#include \"kbench/kernel.h\"\nint broken = ;\n";
  const CompileOutcome built = compile_candidate(source_.string(), {(root() / "cache").string()});
  ASSERT_FALSE(built.ok);
  EXPECT_NE(built.diagnostics.find(source_.string() + ":2:"), std::string::npos)
      << built.diagnostics;
  EXPECT_EQ(built.diagnostics.find("candidate.cpp"), std::string::npos) << built.diagnostics;
}

// A source of kMaxCandidateSourceBytes is compiled; one byte more is refused before it is hashed,
// copied or compiled, and nothing of it is kept as the record's source.
TEST_F(Compiler, ASourceOverTheLimitIsRefusedUnread) {
  {
    std::ofstream append(source_, std::ios::app);
    append << "//";
    append << std::string(kMaxCandidateSourceBytes - fs::file_size(source_) - 3, 'x') << '\n';
  }
  ASSERT_EQ(fs::file_size(source_), kMaxCandidateSourceBytes);
  const CompileOutcome largest = compile_candidate(source_.string(), {(root() / "cache").string()});
  EXPECT_TRUE(largest.ok) << largest.diagnostics;
  EXPECT_EQ(largest.source.size(), kMaxCandidateSourceBytes);

  std::ofstream(source_, std::ios::app) << ' ';
  for (const std::string& diagnostics :
       {compile_candidate(source_.string(), {(root() / "cache").string()}).diagnostics,
        candidate_assembly(source_.string(), 60).diagnostics}) {
    EXPECT_EQ(diagnostics, "candidate source " + source_.string() +
                               " is larger than 4 MiB, the most kbench reads");
  }
  const CompileOutcome over = compile_candidate(source_.string(), {(root() / "cache").string()});
  EXPECT_FALSE(over.ok);
  EXPECT_TRUE(over.source.empty());
  EXPECT_TRUE(over.hash.empty());
}

// `kbench analyze` reads the assembly of any file `kbench eval` compiles: compile_candidate copies
// the source to candidate.cpp, while the assembly's copy keeps the user's name for its debug lines.
// A name without .cpp, one that reads as an option or a response file, and the assembly's own
// name each compiled as C++ source, and the diagnostics name the user's file.
TEST_F(Compiler, TheAssemblyIsOfAnyNameEvalTakes) {
  const std::string kernel = [&] {
    std::ifstream in(source_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  for (const std::string name : {"kernel.txt", "kernel", "-O0", "@flags", "kernel.s"}) {
    const fs::path path = root() / name;
    std::ofstream(path) << kernel;
    const AssemblyOutcome built = candidate_assembly(path.string(), 60);
    ASSERT_TRUE(built.ok) << name << ": " << built.diagnostics;
    EXPECT_NE(built.assembly.find("kb_run"), std::string::npos) << name;
    EXPECT_NE(built.assembly.find(name + "\""), std::string::npos) << name << ": debug lines";
    std::ofstream(path) << "#include \"kbench/kernel.h\"\nint broken = ;\n";
    const AssemblyOutcome broken = candidate_assembly(path.string(), 60);
    ASSERT_FALSE(broken.ok) << name;
    EXPECT_NE(broken.diagnostics.find(path.string() + ":2:"), std::string::npos)
        << name << ": " << broken.diagnostics;
  }
}

TEST_F(Compiler, RemovesWhatKilledBuildsLeftAndKeepsLiveOnes) {
  const fs::path objects = root() / "cache" / "so";
  const fs::path abandoned = testing::abandoned_scratch_dir(objects, "build");
  std::ofstream(abandoned / "candidate.so") << "partial";
  const ScratchDir live(objects, "build");  // a concurrent build, in this process or another
  ASSERT_TRUE(compile_candidate(source_.string(), {(root() / "cache").string()}).ok);
  EXPECT_FALSE(fs::exists(abandoned)) << "a killed build's directory stayed";
  EXPECT_TRUE(fs::exists(live.path())) << "a live build's directory was removed";
}

}  // namespace
}  // namespace kbench
