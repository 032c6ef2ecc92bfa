// `kbench analyze`: the innermost loops read off a compiler's assembly, llvm-mca's report read
// back, llvm-mca itself on loops whose bound is known, and the command on a shipped example.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "analysis/asm_loops.h"
#include "analysis/calibration.h"
#include "analysis/confined_steps.h"
#include "analysis/mca.h"
#include "analysis/trip_counts.h"
#include "cli_support.h"
#include "proc_support.h"
#include "workloads/registry.h"

namespace kbench::analysis {
namespace {

using kbench::testing::run_kbench;
using kbench::testing::source_path;

// Two functions as GCC lays them out with -g: a loop nest whose inner loop spans two files, a
// forward branch that is no loop, and a scalar loop with a call.
constexpr std::string_view kAssembly = R"(	.file	"k.cpp"
	.text
	.file 0 "/work" "k.cpp"
	.file 1 "k.h"
	.globl	_Z4sumsPfl
	.type	_Z4sumsPfl, @function
_Z4sumsPfl:
.LFB0:
	.loc 0 10 3
	xorl	%eax, %eax
.L3:
	.loc 0 11 5 is_stmt 0 view .LVU2
	movq	%rax, %rdx
.L2:
	.loc 0 12 7
	vaddps	(%rdi,%rdx,4), %ymm0, %ymm0
	.loc 1 4 1
	addq	$8, %rdx
	cmpq	%rsi, %rdx
	jb	.L2
	.loc 0 13 5
	incq	%rax
	cmpq	%rsi, %rax
	jne	.L3
	ret
	.size	_Z4sumsPfl, .-_Z4sumsPfl
	.type	kb_run, @function
kb_run:
.L7:
	.loc 0 20 3
	vaddss	%xmm1, %xmm0, %xmm0
	call	foo@PLT
	jmp	.L7
	jne	.L9
.L9:
	ret
)";

TEST(AsmLoops, TheInnermostLoopOfEachFunctionWithItsLinesWidthAndCalls) {
  const std::vector<AsmLoop> loops = innermost_loops(kAssembly);
  ASSERT_EQ(loops.size(), 2u);

  EXPECT_EQ(loops[0].function, "sums(float*, long)");
  EXPECT_EQ(loops[0].header_label, ".L2");
  EXPECT_EQ(loops[0].instructions.size(), 4u);
  EXPECT_EQ(loops[0].instructions.front(), "vaddps\t(%rdi,%rdx,4), %ymm0, %ymm0");
  EXPECT_EQ(loops[0].lines, (std::vector<SourceLine>{{"k.cpp", 12}, {"k.h", 4}}));
  EXPECT_EQ(loops[0].vector_bits, 256);
  EXPECT_FALSE(loops[0].has_call);
  EXPECT_EQ(lines_text(loops[0].lines), "k.cpp:12 k.h:4");

  EXPECT_EQ(loops[1].function, "kb_run");
  EXPECT_EQ(loops[1].instructions.size(), 3u);
  EXPECT_EQ(loops[1].vector_bits, 0) << "vaddss on xmm is scalar";
  EXPECT_TRUE(loops[1].has_call);
  EXPECT_FALSE(loops[1].uses_amx);
}

TEST(AsmLoops, LinesJoinRunsAndLeaveOutSystemHeaders) {
  EXPECT_EQ(lines_text({{"/tmp/x/k.cpp", 3},
                        {"/tmp/x/k.cpp", 4},
                        {"/tmp/x/k.cpp", 5},
                        {"/tmp/x/k.cpp", 9},
                        {"/usr/lib/gcc/x86_64-linux-gnu/12/include/fmaintrin.h", 65}}),
            "k.cpp:3-5,9");
}

TEST(TripCounts, ACounterKeepsTheFlagsWhereTheLoopReadsThem) {
  EXPECT_FALSE(flags_live_at_entry({"movq %rax, %rdx", "addq $8, %rdx", "jb .L2"}));
  EXPECT_FALSE(flags_live_at_entry({"andps %xmm0, %xmm1", "cmpq %rsi, %rdx", "jne .L3"}))
      << "andps leaves the flags alone; cmpq writes them";
  EXPECT_TRUE(flags_live_at_entry({"jne .L5", "addq $1, %rax"}));
  EXPECT_TRUE(flags_live_at_entry({"vaddps %ymm1, %ymm0, %ymm0", "setb %al", "cmpq %rsi, %rdx"}));
  EXPECT_TRUE(flags_live_at_entry({"vaddss %xmm1, %xmm0, %xmm0", "jmp .L7"}))
      << "never written in the body: assumed to carry into it";

  const std::vector<AsmLoop> loops = innermost_loops(kAssembly);
  const InstrumentedAssembly out = instrument(kAssembly, loops);
  EXPECT_EQ(out.saved_flags, (std::vector<bool>{false, true}));
  EXPECT_NE(out.assembly.find(".L2:\n\tlock incq\tkbench_loop_trips+0(%rip)\n"), std::string::npos)
      << out.assembly;
  // Saved on the stack below the red zone, moved to without touching them.
  EXPECT_NE(out.assembly.find(".L7:\n\tleaq\t-128(%rsp), %rsp\n\tpushfq\n"
                              "\tlock incq\tkbench_loop_trips+8(%rip)\n"
                              "\tpopfq\n\tleaq\t128(%rsp), %rsp\n"),
            std::string::npos)
      << out.assembly;
  EXPECT_NE(out.assembly.find("\nkbench_candidate_run:\n"), std::string::npos);
  EXPECT_EQ(out.assembly.find("kb_run"), std::string::npos) << "every kb_run renamed";
  EXPECT_NE(out.assembly.find("\t.zero\t16\n"), std::string::npos);
}

// llvm-mca 19's report for one FMA chain and two independent FMAs per iteration (znver3).
constexpr std::string_view kChainReport = R"(Iterations:        200
Instructions:      1000
Total Cycles:      803
Total uOps:        1000

Dispatch Width:    6
uOps Per Cycle:    1.25
IPC:               1.25
Block RThroughput: 1.0


Cycles with backend pressure increase [ 63.76% ]
Throughput Bottlenecks: 
  Resource Pressure       [ 0.00% ]
  Data Dependencies:      [ 63.76% ]
  - Register Dependencies [ 63.76% ]
  - Memory Dependencies   [ 0.00% ]

Resources:
[0]   - Zn3ALU0
[1]   - Zn3FP0
[2]   - Zn3FP1
[3.0] - Zn3FP45
[3.1] - Zn3FP45


Resource pressure per iteration:
[0]    [1]    [2]    [3.0]  [3.1]  
0.60   1.00   1.00    -      -     
)";

TEST(Mca, AReportReadsAsCyclesPerIterationAndItsBound) {
  const LoopCost chain = parse_mca_report(kChainReport);
  EXPECT_DOUBLE_EQ(chain.cycles_per_iter, 803.0 / 200.0);
  EXPECT_DOUBLE_EQ(chain.block_rthroughput, 1.0);
  EXPECT_DOUBLE_EQ(chain.uops_per_iter, 5.0);
  EXPECT_EQ(chain.dispatch_width, 6);
  EXPECT_NEAR(chain.dependency_share, 0.6376, 1e-9);
  EXPECT_EQ(chain.bound, "latency chain (registers)");
  EXPECT_EQ(chain.busiest_resource, "Zn3FP0");
  EXPECT_DOUBLE_EQ(chain.busiest_resource_cycles, 1.0);

  // The same loop at its ports' pace: the busiest port bounds it.
  std::string at_throughput(kChainReport);
  at_throughput.replace(at_throughput.find("803"), 3, "201");
  EXPECT_EQ(parse_mca_report(at_throughput).bound, "port Zn3FP0");

  EXPECT_THROW(parse_mca_report("llvm-mca: error: invalid instruction"), std::runtime_error);
}

// llvm-mca itself: one FMA chain runs at the FMA's latency (4 cycles on Zen 3) whatever the
// ports allow, eight independent FMAs at the two FMA pipes' pace (4 cycles for 8).
TEST(Mca, AChainRunsAtItsLatencyAndIndependentWorkAtItsPortsPace) {
  const std::vector<std::string> tail = {"addq $32, %rax", "cmpq %rax, %rdx", "jne .L1"};
  std::vector<std::string> chain = {"vfmadd231ps %ymm0, %ymm1, %ymm2"};
  chain.insert(chain.end(), tail.begin(), tail.end());
  const LoopCost chained = simulate_loop(chain, "znver3");
  EXPECT_NEAR(chained.cycles_per_iter, 4.0, 0.3);
  EXPECT_EQ(chained.bound, "latency chain (registers)");
  EXPECT_TRUE(chained.accumulator_chain) << "carried through %ymm2";

  std::vector<std::string> independent;
  for (int r = 2; r < 10; ++r)
    independent.push_back("vfmadd231ps %ymm0, %ymm1, %ymm" + std::to_string(r));
  independent.insert(independent.end(), tail.begin(), tail.end());
  const LoopCost parallel = simulate_loop(independent, "znver3");
  EXPECT_NEAR(parallel.cycles_per_iter, 4.0, 0.3);
  EXPECT_TRUE(parallel.bound.starts_with("port Zn3FP")) << parallel.bound;

  EXPECT_THROW(simulate_loop({"not an instruction"}, "znver3"), std::runtime_error);
}

// A loop's lines are a candidate's text, and llvm-mca reads directives after a ';' as an assembler
// does: unconfined, `.incbin` reads any file kbench's user can (and "/dev/zero", 0, 10^9 takes
// gigabytes). Confined like the build, llvm-mca cannot open a file outside the system's trees.
TEST(Mca, ReadsNoFileThatALoopNames) {
  // As root, llvm-mca runs as a user of its own, whom the key's private directory keeps out too.
  if (!kbench::testing::kernel_has_landlock() && geteuid() != 0)
    GTEST_SKIP() << "no Landlock in this kernel, and not root";
  char dir[] = "/tmp/kbench-mca-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string secret = std::string(dir) + "/key";
  std::ofstream(secret) << "kbench-mca-secret\n";
  const std::vector<std::string> loop = {"nop; .incbin \"" + secret + "\"", "addq $32, %rax",
                                         "cmpq %rax, %rdx", "jne .L1"};
  try {
    simulate_loop(loop, "znver3");
    ADD_FAILURE() << "llvm-mca read " << secret;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).find("kbench-mca-secret"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// Over several runs of a step, a layer counts only where every run had it, and every refusal any
// run met stays: one unconfined run of llvm-mca is all an attack needs.
TEST(ConfinedSteps, AStepKeepsTheLayersEveryRunHadAndEveryRefusal) {
  const std::string refusal = "build_landlock_files: kernel without Landlock (ENOSYS)";
  std::vector<ConfinedStep> steps;
  record_step(steps, "assembly build", {{"build_landlock_files", "build_namespaces"}, {}});
  record_step(steps, "llvm-mca", {{"build_landlock_files", "build_namespaces"}, {}});
  record_step(steps, "llvm-mca", {{"build_namespaces"}, {refusal}});
  record_step(steps, "llvm-mca", {{"build_landlock_files", "build_namespaces"}, {}});
  record_step(steps, "llvm-mca", {{"build_namespaces"}, {refusal}});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].runs, 1);
  EXPECT_EQ(steps[0].sandbox.layers.size(), 2u);
  EXPECT_EQ(steps[1].runs, 4);
  EXPECT_EQ(steps[1].sandbox.layers, std::vector<std::string>{"build_namespaces"});
  EXPECT_EQ(steps[1].sandbox.missing, std::vector<std::string>{refusal});

  EXPECT_EQ(to_text(steps),
            "sandbox: assembly build (2 layers), llvm-mca (4 runs, 1 layer)\n"
            "! llvm-mca ran without " +
                refusal + "\n");
  const nlohmann::json j = to_json(steps);
  EXPECT_EQ(j[1]["step"], "llvm-mca");
  EXPECT_EQ(j[1]["runs"], 4);
  EXPECT_EQ(j[1]["missing"][0], refusal);
  EXPECT_TRUE(j[0]["missing"].empty());
}

PeakReport probe_of(const std::string& isa, double fp32_gflops) {
  PeakReport p;
  p.isa_used = isa;
  p.fp32_fma_gflops = fp32_gflops;
  return p;
}

// The probe's fp32 rate over the model's rate on a loop like the probe's is the clock; a model
// that halves the FMA units (LLVM 19's sapphirerapids: one 512-bit FMA a cycle) gives a clock no
// core runs at, with the figures measured on an AMX Xeon (246 GFLOP/s on one core).
TEST(Calibration, TheClockIsTheProbesRateOverTheModels) {
  const Calibration zen3 =
      calibrate("znver3", probe_of("fp32:avx2+fma library:onednn mem:triad", 92.3));
  EXPECT_EQ(zen3.isa, "avx2+fma");
  EXPECT_NEAR(zen3.model_flops_per_cycle, 32.0, 1.0) << "two 256-bit FMA pipes";
  EXPECT_NEAR(zen3.clock_ghz, 92.3 / zen3.model_flops_per_cycle, 1e-12);
  EXPECT_TRUE(zen3.warning.empty()) << zen3.warning;
  EXPECT_FALSE(zen3.ymm_clock_ghz.has_value()) << "ymm is this probe's widest: one clock";
  EXPECT_EQ(zen3.clock_for(0), zen3.clock_ghz);
  EXPECT_FALSE(zen3.bf16_dot.has_value());

  const Calibration one_unit = calibrate("sapphirerapids", probe_of("fp32:avx512f", 246));
  EXPECT_NEAR(one_unit.model_flops_per_cycle, 32.0, 1.0);
  EXPECT_FALSE(one_unit.warning.empty()) << "a clock of " << one_unit.clock_ghz << " GHz";
  const Calibration two_units = calibrate("cooperlake", probe_of("fp32:avx512f", 246));
  EXPECT_NEAR(two_units.model_flops_per_cycle, 64.0, 2.0);
  EXPECT_NEAR(two_units.clock_ghz, 3.85, 0.15) << "the zmm clock measured there";
  EXPECT_TRUE(two_units.warning.empty());
}

// On an AVX-512 core narrower code runs at its own clock (the AMX Xeon: 3.85 GHz for zmm, 4.13 for
// ymm, so its ymm FMA loop does 132 GFLOP/s), and LLVM 19's cooperlake issues two vdpbf16ps a
// cycle where that machine's probe measures one every two (123 GFLOP/s): the check says 4x.
TEST(Calibration, YmmLoopsGetTheirOwnClockAndTheBf16DotRateIsChecked) {
  PeakReport probe = probe_of("fp32:avx512f bf16:avx512_bf16 amx:amx_bf16 mem:triad", 246);
  probe.fp32_fma_ymm_gflops = 132.2;
  probe.bf16_dot_gflops = 123;
  const Calibration c = calibrate("cooperlake", probe);
  EXPECT_NEAR(c.clock_ghz, 3.85, 0.15);
  ASSERT_TRUE(c.ymm_clock_ghz.has_value());
  EXPECT_NEAR(*c.ymm_clock_ghz, 4.13, 0.15);
  EXPECT_EQ(c.clock_for(512), c.clock_ghz);
  EXPECT_EQ(c.clock_for(256), *c.ymm_clock_ghz);
  EXPECT_EQ(c.clock_for(0), *c.ymm_clock_ghz);
  ASSERT_TRUE(c.bf16_dot.has_value());
  EXPECT_NEAR(c.bf16_dot->ratio(), 4.0, 0.3);
  EXPECT_NE(c.bf16_warning.find("too fast"), std::string::npos) << c.bf16_warning;

  // The model that gets vdpbf16ps right passes the check (its FMA rate is the one it gets wrong).
  const Calibration spr = calibrate("sapphirerapids", probe);
  ASSERT_TRUE(spr.bf16_dot.has_value());
  EXPECT_NEAR(spr.bf16_dot->model_flops_per_cycle, 32.0, 1.0);

  // A loop's time uses its width's clock, and a loop of vdpbf16ps carries the check's warning.
  Analysis a;
  LoopReport zmm, ymm;
  zmm.loop.vector_bits = 512;
  zmm.loop.instructions = {"vdpbf16ps\t%zmm1, %zmm2, %zmm3", "decq\t%rax", "jne\t.L2"};
  ymm.loop.vector_bits = 256;
  ymm.loop.instructions = {"vfmadd231ps\t%ymm1, %ymm2, %ymm3", "decq\t%rax", "jne\t.L3"};
  zmm.cost.cycles_per_iter = ymm.cost.cycles_per_iter = 1;
  a.loops = {zmm, ymm};
  attach_trips(a, {1000000, 1000000}, "cpu");
  attach_timing(a, c, std::nullopt);
  // One zmm vdpbf16ps (64 flops) an iteration, 10^6 of them at the probe's 123 GFLOP/s: 0.520 ms,
  // where the model's one cycle an iteration at 3.85 GHz would say 0.26.
  const double dot_floor_ms = 64.0 * 1e6 / (123 * 1e6);
  for (const LoopReport& r : a.loops) {
    const bool is_zmm = r.loop.vector_bits == 512;
    EXPECT_NEAR(r.predicted_ms, is_zmm ? dot_floor_ms : 1e6 / (*c.ymm_clock_ghz * 1e6), 1e-12);
    ASSERT_EQ(r.warnings.size(), is_zmm ? 1u : 0u);
    if (is_zmm) {
      EXPECT_NE(r.warnings[0].find("at the probe's rate this loop takes 0.520 ms"),
                std::string::npos)
          << r.warnings[0];
    }
  }
  EXPECT_NEAR(a.predicted_ms, dot_floor_ms + 1e6 / (*c.ymm_clock_ghz * 1e6), 1e-12);
  // Where the loop's other work takes longer than its dot products, the model's time stands.
  a.loops = {zmm};
  a.loops[0].cost.cycles_per_iter = 10;
  attach_trips(a, {1000000}, "cpu");
  attach_timing(a, c, std::nullopt);
  EXPECT_NEAR(a.loops[0].predicted_ms, 10e6 / (c.clock_ghz * 1e6), 1e-12);
  EXPECT_EQ(a.loops[0].warnings.back().find("probe's rate"), std::string::npos);
  a.loops = {zmm, ymm};
  attach_trips(a, {1000000, 1000000}, "cpu");
  attach_timing(a, c, std::nullopt);
  // The text says it once more above the table, and only where a loop of dot products is there.
  const std::string line = "! " + c.bf16_warning + "\n";
  EXPECT_NE(to_text(a).find(line), std::string::npos) << to_text(a);
  a.loops = {ymm};
  attach_timing(a, c, std::nullopt);
  EXPECT_EQ(to_text(a).find(line), std::string::npos) << to_text(a);
}

TEST(AnalyzeCommand, ReportsTheLoopsOfAShippedExampleWithItsLines) {
  const auto r =
      run_kbench("analyze -w 12p -c " + source_path("examples/12p_RMSNorm_fast.cpp") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workload"], "12p_RMSNorm");
  EXPECT_FALSE(j["model"].get<std::string>().empty());
  ASSERT_FALSE(j["loops"].empty());
  int in_candidate = 0;
  for (const auto& loop : j["loops"]) {
    EXPECT_GT(loop["cycles_per_iter"].get<double>(), 0);
    EXPECT_GE(loop["cycles_per_iter"].get<double>(),
              0.99 * loop["block_rthroughput"].get<double>());
    EXPECT_FALSE(loop["bound"].get<std::string>().empty());
    if (loop["lines"].get<std::string>().find("12p_RMSNorm_fast.cpp:") != std::string::npos)
      ++in_candidate;
  }
  EXPECT_GT(in_candidate, 0);
}

// An expert includes its shared headers: analyzed as kbench compiles it, headers expanded.
TEST(AnalyzeCommand, AnExpertIsAnalyzedWithItsSharedHeaders) {
  const auto r = run_kbench("analyze -w 8p --expert --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["loops"].empty());
  EXPECT_EQ(j["candidate"], "expert (default configuration)");
}

// The trips come from one call of an instrumented build in the sandboxed worker: the test
// candidate's loop runs once per output element.
// A loop that reads the flags at its header is counted too, its counter keeping the flags: were
// they changed, the exit test would fail once and the loop run one element more.
TEST(AnalyzeCommand, CountsALoopWhoseFlagsAreLiveAtItsHeader) {
  const std::string candidate = source_path("tests/candidates/flags_live_loop.cpp");
  const auto r = run_kbench("analyze -w 12p -c " + candidate + " --size smoke --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto loop = std::find_if(j["loops"].begin(), j["loops"].end(), [](const auto& l) {
    return l["lines"].template get<std::string>().find("flags_live_loop.cpp:") != std::string::npos;
  });
  ASSERT_NE(loop, j["loops"].end()) << j.dump(2);
  const std::int64_t elements = find_workload("12p")->problem(Size::kSmoke).outputs[0].numel();
  EXPECT_EQ((*loop)["trips"], elements + 1) << "the header runs once more, to exit";
  EXPECT_FALSE(j.contains("trips_error")) << j.dump(2);
}

TEST(AnalyzeCommand, CountsALoopsTripsInOneSandboxedCall) {
  const std::string candidate = source_path("tests/candidates/counted_loop.cpp");
  const auto r = run_kbench("analyze -w 12p -c " + candidate + " --size smoke --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["trips_size"], "smoke");
  const std::int64_t elements = find_workload("12p")->problem(Size::kSmoke).outputs[0].numel();
  const auto& hottest = j["loops"][0];
  EXPECT_EQ(hottest["trips"], elements) << j.dump(2);
  EXPECT_NE(hottest["lines"].get<std::string>().find("counted_loop.cpp:"), std::string::npos);
  EXPECT_GT(hottest["share"].get<double>(), 0.99);
  // Cycles become time at the clock calibrated against the probe, beside the measured call.
  EXPECT_GT(j["clock_ghz"].get<double>(), 1.0);
  EXPECT_LT(j["clock_ghz"].get<double>(), 6.0);
  EXPECT_GT(j["predicted_ms"].get<double>(), 0);
  EXPECT_GT(j["measured_ms"].get<double>(), 0);
  EXPECT_GT(j["explained_pct"].get<double>(), 0);
  // A loop narrower than 512 bits runs at the ymm clock where the probe measured one (AVX-512
  // machines), else at the calibrated clock.
  const bool ymm_clock =
      hottest["vector_bits"].get<int>() < 512 && j["calibration"].contains("ymm_clock_ghz");
  const double clock =
      ymm_clock ? j["calibration"]["ymm_clock_ghz"].get<double>() : j["clock_ghz"].get<double>();
  EXPECT_NEAR(hottest["predicted_ms"].get<double>(),
              hottest["cycles"].get<double>() / (clock * 1e6), 1e-9);

  // Each step that built, simulated or ran the candidate's text says how it was confined, as
  // `kbench eval` does: a layer this machine refused would show, not only a failure.
  std::vector<std::string> steps;
  for (const auto& step : j["sandbox"]) {
    steps.push_back(step["step"]);
    EXPECT_FALSE(step["layers"].empty()) << step.dump();
    EXPECT_GE(step["runs"].get<int>(), 1) << step.dump();
  }
  ASSERT_FALSE(steps.empty()) << j.dump(2);
  EXPECT_EQ(steps.front(), "assembly build");
  for (const char* step : {"llvm-mca", "instrumented build", "instrumented run", "timed run"})
    EXPECT_NE(std::find(steps.begin(), steps.end(), step), steps.end()) << step;

  const auto without = run_kbench("analyze -w 12p -c " + candidate + " --static --json");
  ASSERT_EQ(without.exit_code, 0) << without.out;
  const nlohmann::json s = nlohmann::json::parse(without.out);
  ASSERT_EQ(s["sandbox"].size(), 2u) << s["sandbox"].dump();
  EXPECT_EQ(s["sandbox"][0]["step"], "assembly build");
  EXPECT_EQ(s["sandbox"][1]["step"], "llvm-mca");
  EXPECT_TRUE(s["trips_size"].is_null());
  EXPECT_TRUE(s["loops"][0]["trips"].is_null());
  EXPECT_TRUE(s["clock_ghz"].is_null());
  EXPECT_TRUE(s["explained_pct"].is_null());
}

// `kbench eval --analyze`: the analysis rides with the verdict and is recorded with the result.
TEST(AnalyzeCommand, EvalAnalyzeRecordsTheLoopsWithTheResult) {
  const std::string db = kbench::testing::temp_db("eval_analyze");
  const auto r = run_kbench("eval -w 12p -c " + source_path("examples/12p_RMSNorm_fast.cpp") +
                            " --size smoke --time-budget-s 0.3 --analyze --json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "correct");
  EXPECT_EQ(j["analysis"]["trips_size"], "smoke");
  EXPECT_FALSE(j["analysis"]["loops"].empty());

  const auto stored = run_kbench("results --format json -n 1 --db " + db);
  ASSERT_EQ(stored.exit_code, 0) << stored.out;
  const nlohmann::json records = nlohmann::json::parse(stored.out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["analysis"], j["analysis"]);
}

TEST(AnalyzeCommand, BadInputGetsAOneLineErrorAndItsExitCode) {
  EXPECT_EQ(run_kbench("analyze -w 12p").exit_code, 2) << "neither -c nor --expert";
  EXPECT_EQ(run_kbench("analyze -w 12p --expert").exit_code, 2) << "12p has no expert";
  EXPECT_EQ(
      run_kbench("analyze -w 99z -c " + source_path("examples/12p_RMSNorm_fast.cpp")).exit_code, 2);
  EXPECT_EQ(run_kbench("analyze -w 12p -c /nonexistent/k.cpp").exit_code, 2);
  const std::filesystem::path bad =
      std::filesystem::temp_directory_path() / "kbench_analyze_bad.cpp";
  std::ofstream(bad) << "int kb_run( {\n";
  const auto r = kbench::testing::run_kbench_stderr("analyze -w 12p -c " + bad.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("kbench: the candidate does not compile:\n"), std::string::npos) << r.out;
  // The compiler's lines stay lines (not one line with escaped newlines), the first error first,
  // naming the file as it was given, as `kbench eval` does.
  EXPECT_NE(r.out.find("\n" + bad.string() + ":1:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\\x0a"), std::string::npos) << r.out;
  std::filesystem::remove(bad);

  // A binary file as the candidate: the compiler quotes its bytes, which reach the terminal
  // escaped (sinks.h terminal_safe), never raw.
  const std::filesystem::path binary =
      std::filesystem::temp_directory_path() / "kbench_analyze_binary.cpp";
  {
    std::ifstream in("/bin/true", std::ios::binary);
    std::vector<char> bytes(4096);
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(binary, std::ios::binary).write(bytes.data(), in.gcount());
  }
  const auto b = kbench::testing::run_kbench_stderr("analyze -w 12p -c " + binary.string());
  EXPECT_EQ(b.exit_code, 1);
  for (const char c : b.out)
    EXPECT_TRUE(c == '\n' || c == '\t' || static_cast<unsigned char>(c) >= 0x20)
        << "raw control byte " << static_cast<int>(static_cast<unsigned char>(c));
  // The compiler quotes the binary in lines of tens of kilobytes; each shown line is clipped at
  // 400 bytes, each byte shown as at most 4 characters (\xNN), with a note of what was cut.
  std::istringstream lines(b.out);
  int line_count = 0;
  for (std::string line; std::getline(lines, line); ++line_count)
    EXPECT_LE(line.size(), 4 * 400u + 100) << line.substr(0, 80);
  EXPECT_GT(line_count, 3) << b.out;
  std::filesystem::remove(binary);
}

}  // namespace
}  // namespace kbench::analysis
