// Every ISA path of every shipped expert through the correctness gate. Apart from experts_test,
// which CTest runs alone (some of its evaluations take both cores): these evaluations take one
// thread each and check correctness only, so they may run beside other tests.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "core/environment.h"
#include "experts/expert.h"
#include "workloads/registry.h"

namespace kbench::experts {
namespace {

using kbench::testing::run_kbench;
using kbench::testing::source_path;

// Every path of every shipped expert, forced with KB_MAX_ISA (include/isa.h), passes the
// correctness gate at smoke size: the paths this machine does not take by itself are checked too.
// A path above what this CPU runs is skipped (best_isa() would fall back to a lower one); AMX only
// for the experts that have it.
TEST(ShippedExpertsTest, EveryPathThisCpuRunsIsCorrectAtSmokeSize) {
  const bool avx512 =
      cpu_has("avx512f") && cpu_has("avx512bw") && cpu_has("avx512vl") && cpu_has("avx512dq");
  const int best = cpu_has("amx_bf16") && avx512 ? 3 : avx512 ? 2 : cpu_has("avx2") ? 1 : 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kbench-expert-paths-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("experts"))) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string name = entry.path().stem().string();
    const std::optional<ExpertKernel> expert =
        find_expert(source_path("experts"), *find_workload(name));
    ASSERT_TRUE(expert.has_value()) << name;
    const bool has_amx = expert->source.find("best_isa(Isa::kAmx)") != std::string::npos;
    // A declared paths line names the AMX path exactly when the expert has one, so the tuner
    // grids what this machine runs.
    if (!expert->paths.empty()) {
      EXPECT_EQ(std::count(expert->paths.begin(), expert->paths.end(), "amx"), has_amx ? 1 : 0)
          << name;
    }
    for (int path = 0; path <= std::min(best, has_amx ? 3 : 2); ++path) {
      const auto file = dir / (name + "_isa" + std::to_string(path) + ".cpp");
      std::ofstream(file) << "#define KB_MAX_ISA " << path << "\n"
                          << configured_source(*expert, default_config(*expert));
      const auto r = run_kbench("eval -w " + name + " -c " + file.string() +
                                " --size smoke --time-budget-s 0.1 --iters 2 --max-iters 2 --json "
                                "--no-record --db " +
                                kbench::testing::temp_db("paths"));
      ASSERT_EQ(r.exit_code, 0) << r.out;
      const nlohmann::json j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["status"], "correct")
          << name << " KB_MAX_ISA " << path << ": " << j["error"] << "\n"
          << j["diagnostics"].get<std::string>();
      ++checked;
    }
  }
  EXPECT_GE(checked, 8 * std::min(best + 1, 3));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kbench::experts
