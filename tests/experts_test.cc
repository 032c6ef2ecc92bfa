// The expert tier: the declared search space in a source, its grid, and `kbench tune` / `kbench
// run` end to end with a test expert (the RMSNorm example with one tunable whose values compile
// and pass, compute wrongly, and fail a static_assert).
#include "experts/expert.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agents/candidate_sources.h"
#include "cli_support.h"
#include "core/environment.h"
#include "experts/tuner.h"
#include "harness/evaluator.h"
#include "workloads/registry.h"

namespace kbench::experts {
namespace {

using kbench::testing::run_kbench;
using kbench::testing::source_path;

const char* kSpace =
    "// An expert.\n"
    "// tune: KB_MC = 48 96 192 (default 96)\n"
    "  // tune: KB_UNROLL = 1 2 (default 2)\n"
    "#ifndef KB_MC\n#define KB_MC 96\n#endif\n";

TEST(ExpertSpaceTest, DeclarationsParseInOrder) {
  const std::vector<TunableParam> params = parse_tunables(kSpace, "x.cpp");
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].name, "KB_MC");
  EXPECT_EQ(params[0].values, (std::vector<long long>{48, 96, 192}));
  EXPECT_EQ(params[0].default_value, 96);
  EXPECT_EQ(params[1].name, "KB_UNROLL");
  EXPECT_EQ(params[1].default_value, 2);
}

TEST(ExpertSpaceTest, MalformedDeclarationsNameTheFileAndLine) {
  for (const std::string bad :
       {"// tune: KB_MC = 48 96\n", "// tune: KB_MC = 48 x (default 48)\n",
        "// tune: KB_MC = (default 1)\n", "// tune: KB_MC = 1 2 (default 3)\n",
        "// tune: 9X = 1 (default 1)\n",
        "// tune: A = 1 (default 1)\n// tune: A = 2 (default 2)\n"}) {
    try {
      parse_tunables("int x;\n" + bad, "e.cpp");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("e.cpp:", 0), 0u) << e.what();
    }
  }
}

// An expert whose source is `source`, parsed as find_expert parses a file.
ExpertKernel space_expert(const char* source = kSpace) {
  ExpertKernel e;
  e.workload = "8p_GEMM";
  e.path = "experts/8p_GEMM.cpp";
  e.source = source;
  e.params = parse_tunables(source, e.path);
  e.paths = parse_paths(source, e.path, e.params);
  return e;
}

const char* kPathSpace =
    "// tune paths: amx avx512 avx2 scalar\n"
    "// tune: KB_BQ = 32 64 (default 64)\n"
    "// tune: KB_MR = 4 6 8 (default 6) [avx512]\n"
    "// tune: KB_KC = 128 256 (default 256) [avx512 avx2]\n"
    "// tune: KB_AMX_KC = 256 768 (default 256) [amx]\n";

TEST(ExpertSpaceTest, PathTagsHoldTheTunablesOfOtherPathsAtTheirDefaults) {
  const ExpertKernel e = space_expert(kPathSpace);
  const std::vector<TunableParam>& params = e.params;
  ASSERT_EQ(params.size(), 4u);
  EXPECT_TRUE(params[0].paths.empty());
  EXPECT_EQ(params[1].paths, (std::vector<std::string>{"avx512"}));
  EXPECT_EQ(params[2].paths, (std::vector<std::string>{"avx512", "avx2"}));
  EXPECT_EQ(params[1].values, (std::vector<long long>{4, 6, 8}));
  EXPECT_EQ(e.paths, (std::vector<std::string>{"amx", "avx512", "avx2", "scalar"}));
  EXPECT_EQ(full_grid(e).size(), 24u);  // no path: the whole space
  EXPECT_EQ(full_grid(e, "avx512").size(), 12u);
  EXPECT_EQ(full_grid(e, "avx2").size(), 4u);
  EXPECT_EQ(full_grid(e, "amx").size(), 4u);
  EXPECT_EQ(full_grid(e, "scalar").size(), 2u);
  for (const Config& c : full_grid(e, "amx")) {
    EXPECT_EQ(c.at("KB_MR"), 6);
    EXPECT_EQ(c.at("KB_KC"), 256);
  }
  EXPECT_EQ(full_grid(e, "amx")[0], default_config(e));
  EXPECT_EQ(select_configs(e, 0, 1, "amx").size(), 4u);
  EXPECT_EQ(select_configs(e, 3, 1, "avx512").size(), 3u);
  // This machine's path: the most capable declared one it runs (scalar always runs).
  const std::string here = path_on_this_machine(e);
  EXPECT_TRUE(machine_runs_path(here)) << here;
  EXPECT_TRUE(machine_runs_path("scalar"));
  EXPECT_FALSE(machine_runs_path("sse9"));
  const auto rank = [](const std::string& p) {
    return std::find(std::begin(kExpertPaths), std::end(kExpertPaths), p) -
           std::begin(kExpertPaths);
  };
  for (const char* p : kExpertPaths) {
    if (machine_runs_path(p)) {
      EXPECT_GE(rank(here), rank(p)) << p << " runs here too";
    }
  }
  ExpertKernel untagged = e;
  untagged.paths.clear();
  EXPECT_EQ(path_on_this_machine(untagged), "");
}

TEST(ExpertSpaceTest, MalformedPathTagsNameTheFileAndLine) {
  const std::string paths = "// tune paths: avx512 avx2\n";
  for (const std::string& bad :
       {paths + "// tune: KB_MR = 4 (default 4) [amx]\n",          // not a declared path
        std::string("// tune: KB_MR = 4 (default 4) [avx512]\n"),  // a tag without a paths line
        paths + "// tune: KB_MR = 4 (default 4) []\n", paths + "// tune: KB_MR = 4 (default 4) x\n",
        paths + "// tune: KB_MR = 4 (default 4) avx512]\n",
        std::string("// tune paths: avx512 sse9\n"), std::string("// tune paths: avx2 avx2\n"),
        std::string("// tune paths:\n"), paths + paths}) {
    try {
      const std::string source = "int x;\n" + bad;
      parse_paths(source, "e.cpp", parse_tunables(source, "e.cpp"));
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("e.cpp:", 0), 0u) << e.what();
    }
  }
}

TEST(ExpertSpaceTest, TheGridIsTheProductWithTheDefaultFirst) {
  const ExpertKernel e = space_expert();
  const std::vector<Config> grid = full_grid(e);
  ASSERT_EQ(grid.size(), 6u);
  EXPECT_EQ(grid[0], default_config(e));
  std::set<Config> distinct(grid.begin(), grid.end());
  EXPECT_EQ(distinct.size(), 6u);
  // Pruned: the default and a seeded sample, the same for the same seed.
  const std::vector<Config> some = select_configs(e, 3, 7);
  ASSERT_EQ(some.size(), 3u);
  EXPECT_EQ(some[0], default_config(e));
  EXPECT_EQ(some, select_configs(e, 3, 7));
  EXPECT_EQ(select_configs(e, 0, 7).size(), 6u);
  EXPECT_EQ(select_configs(e, 60, 7).size(), 6u);
}

TEST(ExpertSpaceTest, ConfiguredSourceDefinesEachParameterAndRefusesStrangers) {
  const ExpertKernel e = space_expert();
  Config c = default_config(e);
  c["KB_MC"] = 192;
  const std::string source = configured_source(e, c);
  EXPECT_NE(source.find("#define KB_MC 192\n"), std::string::npos);
  EXPECT_NE(source.find("#define KB_UNROLL 2\n"), std::string::npos);
  EXPECT_LT(source.find("#define KB_MC 192"), source.find("#ifndef KB_MC"));
  EXPECT_EQ(config_text(c), "KB_MC=192 KB_UNROLL=2");
  c["KB_MC"] = 100;
  EXPECT_THROW(configured_source(e, c), std::invalid_argument);
  Config stranger = default_config(e);
  stranger["KB_NC"] = 1;
  EXPECT_THROW(validate_config(e, stranger), std::invalid_argument);
  Config missing = {{"KB_MC", 96}};
  EXPECT_THROW(validate_config(e, missing), std::invalid_argument);
}

// Shared headers are expanded in place, each once, with #line markers back to the real files; a
// quoted include that leaves the experts directory is refused.
TEST(ExpertSpaceTest, IncludesOfSharedHeadersAreExpandedOnce) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kbench-experts-include-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "include");
  std::ofstream(dir / "include" / "blocks.h")
      << "#pragma once\n// tune: KB_BLOCK = 16 32 (default 32)\nint shared_block();\n";
  std::ofstream(dir / "include" / "outer.h")
      << "#pragma once\n#include \"blocks.h\"\nint outer();\n";
  std::ofstream(dir / "12p_RMSNorm.cpp")
      << "#include \"kbench/kernel.h\"\n#include \"include/outer.h\"\n"
         "  #  include \"include/blocks.h\"\nint kernel_line_4;\n";
  const std::optional<ExpertKernel> e = find_expert(dir.string(), *find_workload("12p"));
  ASSERT_TRUE(e.has_value());
  const std::string& src = e->source;
  EXPECT_NE(src.find("#include \"kbench/kernel.h\""), std::string::npos);
  EXPECT_EQ(src.find("#pragma once"), std::string::npos);
  const std::size_t first = src.find("int shared_block();");
  ASSERT_NE(first, std::string::npos) << src;
  EXPECT_EQ(src.find("int shared_block();", first + 1), std::string::npos) << src;
  EXPECT_NE(src.find("#line 1 \"include/blocks.h\"\n"), std::string::npos) << src;
  EXPECT_NE(src.find("#line 4 \"12p_RMSNorm.cpp\"\nint kernel_line_4;"), std::string::npos) << src;
  ASSERT_EQ(e->params.size(), 1u);
  EXPECT_EQ(e->params[0].name, "KB_BLOCK");

  std::ofstream(dir / "12p_RMSNorm.cpp") << "#include \"../outside.h\"\n";
  std::ofstream(dir.parent_path() / "outside.h") << "int secret;\n";
  EXPECT_THROW(find_expert(dir.string(), *find_workload("12p")), std::runtime_error);
  std::filesystem::remove(dir.parent_path() / "outside.h");
  std::ofstream(dir / "12p_RMSNorm.cpp") << "#include \"include/missing.h\"\n";
  EXPECT_THROW(find_expert(dir.string(), *find_workload("12p")), std::runtime_error);
  std::filesystem::remove_all(dir);
}

// KB_VARIANT 0: the example as it is; 1: zeros (incorrect); 2: refused by a static_assert.
std::string test_expert() {
  return "// tune: KB_VARIANT = 0 1 2 (default 0)\n#ifndef KB_VARIANT\n#define KB_VARIANT 0\n"
         "#endif\nstatic_assert(KB_VARIANT != 2, \"variant 2 is invalid\");\n" +
         agents::testing::wrap_kb_run(
             agents::testing::read_text(source_path("examples/12p_RMSNorm_fast.cpp")), "",
             "  if (KB_VARIANT == 1) {\n    memset(o[0].data, 0, 2 * kb_numel(&o[0]));\n"
             "    return 0;\n  }");
}

// Answers each configured source with a canned result, in the order of the configurations.
class CannedExecutor : public Executor {
 public:
  explicit CannedExecutor(std::vector<EvalResult> results) : results_(std::move(results)) {}
  std::vector<EvalResult> evaluate(const std::vector<std::string>& sources,
                                   const OnDone& on_done) override {
    EXPECT_EQ(sources.size(), results_.size());
    for (std::size_t i = 0; i < results_.size(); ++i)
      if (on_done) on_done(i, results_[i]);
    return results_;
  }

 private:
  std::vector<EvalResult> results_;
};

EvalResult timed_point(double speedup, double low, double high) {
  EvalResult r;
  r.status = Status::kCorrect;
  r.speedup = speedup;
  r.speedup_ci95 = std::pair(low, high);
  return r;
}

// KB_MC 96 (the default), 48, 192 with KB_UNROLL at its default: three points.
std::vector<Config> three_points(const ExpertKernel& e) {
  std::vector<Config> configs;
  for (long long mc : {96, 48, 192}) configs.push_back({{"KB_MC", mc}, {"KB_UNROLL", 2}});
  EXPECT_EQ(configs[0], default_config(e));
  return configs;
}

TEST(ExpertTuneTest, AWinnerInsideItsOwnIntervalKeepsTheDefault) {
  const ExpertKernel e = space_expert();
  // 6p on the AMX Xeon: the best 1.87x [1.71, 1.94] against the default's 1.79x.
  CannedExecutor executor(
      {timed_point(1.79, 1.74, 1.85), timed_point(1.87, 1.71, 1.94), timed_point(1.60, 1.5, 1.7)});
  const TuneReport report = tune(e, three_points(e), executor);
  ASSERT_TRUE(report.best && report.chosen);
  EXPECT_EQ(*report.best, 1u);
  EXPECT_EQ(*report.chosen, 0u);
  EXPECT_TRUE(report.kept_default());
  EXPECT_NEAR(*report.gain_over_default, 1.87 / 1.79, 1e-9);
}

TEST(ExpertTuneTest, AWinnerThatClearsTheDefaultIsChosen) {
  const ExpertKernel e = space_expert();
  // 1p on the AMX Xeon: 2.84x [2.79, 2.89] against the default's 2.32x.
  CannedExecutor executor(
      {timed_point(2.32, 2.28, 2.35), timed_point(2.84, 2.79, 2.89), timed_point(2.0, 1.9, 2.1)});
  const TuneReport report = tune(e, three_points(e), executor);
  EXPECT_EQ(*report.chosen, 1u);
  EXPECT_FALSE(report.kept_default());
  // Just above the margin, and just below it.
  CannedExecutor above(
      {timed_point(2.0, 1.9, 2.1), timed_point(2.2, 2.0 * 1.016, 2.3), timed_point(1, 1, 1)});
  EXPECT_EQ(*tune(e, three_points(e), above).chosen, 1u);
  CannedExecutor below(
      {timed_point(2.0, 1.9, 2.1), timed_point(2.2, 2.0 * 1.014, 2.3), timed_point(1, 1, 1)});
  EXPECT_EQ(*tune(e, three_points(e), below).chosen, 0u);
}

TEST(ExpertTuneTest, WithoutACorrectDefaultTheBestIsChosen) {
  const ExpertKernel e = space_expert();
  EvalResult broken;
  broken.status = Status::kIncorrect;
  CannedExecutor executor({broken, timed_point(1.2, 1.0, 1.4), timed_point(1.1, 1.0, 1.2)});
  const TuneReport report = tune(e, three_points(e), executor);
  EXPECT_EQ(*report.chosen, 1u);
  EXPECT_FALSE(report.gain_over_default.has_value());
}

TEST(ExpertTuneTest, TuneRecordsEveryPointKeepsTheBestAndRunUsesIt) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kbench-experts-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "experts");
  std::ofstream(dir / "experts" / "12p_RMSNorm.cpp") << test_expert();
  ::setenv("KBENCH_EXPERTS_DIR", (dir / "experts").c_str(), 1);
  const std::string db = (dir / "results.db").string();

  const auto tune = run_kbench("tune -w 12p --size smoke --time-budget-s 0.3 --json --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.out;
  const nlohmann::json t = nlohmann::json::parse(tune.out);
  EXPECT_EQ(t["space"], 3);
  ASSERT_EQ(t["points"].size(), 3u);
  EXPECT_EQ(t["points"][0]["config"]["KB_VARIANT"], 0);
  EXPECT_EQ(t["points"][0]["status"], "correct");
  EXPECT_EQ(t["points"][1]["status"], "incorrect");
  EXPECT_EQ(t["points"][2]["status"], "compile_error");
  EXPECT_EQ(t["best"]["config"]["KB_VARIANT"], 0);
  EXPECT_DOUBLE_EQ(t["gain_over_default"].get<double>(), 1.0);  // the default is the best
  EXPECT_TRUE(t["saved"].get<bool>());
  // Every point is a record of its own.
  const nlohmann::json recent =
      nlohmann::json::parse(run_kbench("results --json -w 12p --db " + db).out);
  EXPECT_EQ(recent.size(), 3u);

  const auto run =
      run_kbench("run -w 12p -w 13p --size smoke --time-budget-s 0.3 --json --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json r = nlohmann::json::parse(run.out);
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r[0]["expert"].is_object()) << r[0].dump();
  EXPECT_TRUE(r[0]["expert"]["tuned"].get<bool>());
  EXPECT_EQ(r[0]["expert"]["config"], "KB_VARIANT=0");
  EXPECT_EQ(r[0]["expert"]["status"], "correct");
  EXPECT_TRUE(r[0]["expert_speedup"].is_number());
  EXPECT_TRUE(r[1]["expert"].is_null());  // 13p has no expert here
  EXPECT_TRUE(r[1]["expert_speedup"].is_null());

  // The markdown table gives the expert's speedup in its last column.
  const auto table =
      run_kbench("run -w 12p --size smoke --time-budget-s 0.3 --markdown --db " + db);
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("| expert speedup [95% CI] |"), std::string::npos) << table.out;
  const std::size_t row = table.out.find("| 12p_RMSNorm |");
  ASSERT_NE(row, std::string::npos) << table.out;
  const std::string line = table.out.substr(row, table.out.find('\n', row) - row);
  EXPECT_NE(line.find("x ["), std::string::npos) << line;

  const auto without =
      run_kbench("run -w 12p --size smoke --time-budget-s 0.3 --no-experts --json --db " + db);
  ASSERT_EQ(without.exit_code, 0) << without.out;
  EXPECT_TRUE(nlohmann::json::parse(without.out)[0]["expert"].is_null());
  ::unsetenv("KBENCH_EXPERTS_DIR");
  std::filesystem::remove_all(dir);
}

// The default a `// tune:` line declares is the one the source defines for itself (in the expert or
// a shared header it includes): a source compiled without a configuration runs the declared
// default, not another point of the space.
TEST(ShippedExpertsTest, EachDeclaredDefaultIsTheOneTheSourceDefines) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("experts"))) {
    if (entry.path().extension() != ".cpp") continue;
    const Workload* w = find_workload(entry.path().stem().string());
    ASSERT_NE(w, nullptr) << entry.path() << " names no workload";
    const std::optional<ExpertKernel> expert = find_expert(source_path("experts"), *w);
    ASSERT_TRUE(expert.has_value());
    for (const TunableParam& param : expert->params) {
      const std::string guard = "#ifndef " + param.name + "\n#define " + param.name + " ";
      const std::size_t at = expert->source.find(guard);
      ASSERT_NE(at, std::string::npos) << entry.path() << " defines no default for " << param.name;
      EXPECT_EQ(std::stoll(expert->source.substr(at + guard.size())), param.default_value)
          << entry.path() << " " << param.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 30);
}

// The shipped GEMM experts' tags: on AMX only the tile path's two tunables vary.
TEST(ShippedExpertsTest, EachPathGridsOnlyTheTunablesItReads) {
  const std::optional<ExpertKernel> gemm =
      find_expert(source_path("experts"), *find_workload("8p"));
  ASSERT_TRUE(gemm.has_value());
  EXPECT_EQ(full_grid(*gemm, "amx").size(), 8u);
  EXPECT_EQ(full_grid(*gemm, "avx512").size(), 162u);
  EXPECT_EQ(full_grid(*gemm, "avx2").size(), 9u);
  EXPECT_EQ(full_grid(*gemm, "scalar").size(), 1u);
  const std::optional<ExpertKernel> flash =
      find_expert(source_path("experts"), *find_workload("1p"));
  ASSERT_TRUE(flash.has_value());
  EXPECT_EQ(full_grid(*flash, "amx").size(), 12u);  // KB_BQ x KB_BK
  EXPECT_EQ(full_grid(*flash, "avx512").size(), 192u);
}

// Every shipped expert passes the gates at smoke size (odd shapes: every tail path) with its
// default configuration, on whatever ISA path this machine takes, with 1 and 2 threads.
TEST(ShippedExpertsTest, EachIsCorrectAtSmokeSizeOnThisMachine) {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("experts"))) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string name = entry.path().stem().string();
    const Workload* w = find_workload(name);
    ASSERT_NE(w, nullptr) << entry.path() << " names no workload";
    ++found;
    // Its declared space parses, and its default is a valid point.
    const std::optional<ExpertKernel> expert = find_expert(source_path("experts"), *w);
    ASSERT_TRUE(expert.has_value());
    EXPECT_NO_THROW(validate_config(*expert, default_config(*expert)));
    const int cpus = static_cast<int>(worker_cpus(1 << 20).size());
    for (int threads = 1; threads <= std::min(2, cpus); ++threads) {
      const auto r = run_kbench(
          "eval -w " + name + " --expert --size smoke --threads " + std::to_string(threads) +
          " --time-budget-s 0.2 --json --no-record --db " + kbench::testing::temp_db("shipped"));
      ASSERT_EQ(r.exit_code, 0) << r.out;
      const nlohmann::json j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j["status"], "correct") << name << " threads " << threads << ": " << j["error"];
    }
  }
  EXPECT_GE(found, 2);
}

TEST(ExpertTuneTest, AWorkloadWithoutAnExpertIsAUsageError) {
  ::setenv("KBENCH_EXPERTS_DIR", "/nonexistent-kbench-experts", 1);
  const auto r = run_kbench("tune -w 12p --db " + kbench::testing::temp_db("tune_none") + " 2>&1");
  ::unsetenv("KBENCH_EXPERTS_DIR");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("has no expert kernel"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kbench::experts
