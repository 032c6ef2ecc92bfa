// All four methods end to end: the real kbench executable against the scripted LLM server on
// loopback, every sample evaluated by the real harness. Canned replies are the repository's example
// candidates (a fast correct RMSNorm, a wrong one), a compile failure and a reply without code.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agents/candidate_sources.h"
#include "agents/scripted_llm_server.h"
#include "cli_support.h"
#include "store/store.h"

extern char** environ;

namespace kbench::agents {
namespace {

using kbench::testing::run_kbench;
using kbench::testing::source_path;
using testing::read_text;
using testing::ScriptedLlmServer;
using testing::ScriptedResponse;

std::string fenced(const std::string& code) {
  return "Here it is.\n```cpp\n" + code + "```\n";
}

const std::string& correct_reply() {
  static const std::string reply = fenced(read_text(source_path("examples/12p_RMSNorm_fast.cpp")));
  return reply;
}
const std::string& wrong_reply() {
  static const std::string reply = fenced(read_text(source_path("examples/12p_RMSNorm_wrong.cpp")));
  return reply;
}
const std::string kCompileErrorReply = fenced(
    "#include \"kbench/kernel.h\"\nextern \"C\" int kb_run(const kb_config* cfg, const kb_tensor* "
    "in, int32_t n, kb_tensor* out, int32_t m) { return undefined_name; }\n");
const std::string kNoCodeReply = "I would rather describe the algorithm in words.";

ScriptedResponse ok(const std::string& text) {
  return {200, ScriptedLlmServer::openai_body(text, 100, 40), {}, 0};
}

// One database for the suite, so the machine's peaks are measured once.
class AgentEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("kbench-agent-e2e-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*dir_);
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::string db() { return (*dir_ / "results.db").string(); }
  static std::string file(const std::string& name) { return (*dir_ / name).string(); }

  // The flags every run shares: the smoke size, short timing, and the server's address.
  static std::string common_flags(const ScriptedLlmServer& server, const std::string& extra) {
    return "agent --provider openai --base-url " + server.url() +
           "/v1 --model scripted --workload 12p --size smoke --time-budget-s 0.3 --max-retries 2 "
           "--request-timeout-s 20 --db " +
           db() + " " + extra;
  }
  // kbench with `args` (split at spaces) started in the background, its stderr to `err_path` when
  // given; -1 when it could not be started.
  static pid_t spawn_kbench(const std::string& args, const std::string& err_path = "") {
    std::vector<std::string> argv_strings = {kbench::testing::kbench_exe()};
    std::istringstream words(args);
    for (std::string w; words >> w;) argv_strings.push_back(w);
    std::vector<char*> argv;
    for (std::string& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!err_path.empty())
      posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
  }
  static std::vector<AgentSample> samples_of_latest_run() {
    ResultStore store = ResultStore::open(db());
    std::vector<AgentSample> all = store.agent_samples({});
    std::int64_t latest = 0;
    for (const AgentSample& s : all) latest = std::max(latest, s.run_id);
    std::vector<AgentSample> mine;
    for (const AgentSample& s : all)
      if (s.run_id == latest) mine.push_back(s);
    return mine;
  }
  static std::map<std::string, int> statuses(const std::vector<AgentSample>& samples) {
    std::map<std::string, int> count;
    for (const AgentSample& s : samples) ++count[s.status];
    return count;
  }

  static std::filesystem::path* dir_;
};
std::filesystem::path* AgentEndToEnd::dir_ = nullptr;

TEST_F(AgentEndToEnd, BestOfNEvaluatesEverySampleAndTheSummaryAgreesWithTheStore) {
  // Arrival order among concurrent requests is not fixed; the multiset of replies is.
  const std::vector<std::string> replies = {correct_reply(), wrong_reply(), kCompileErrorReply,
                                            kNoCodeReply};
  ScriptedLlmServer server(
      [&](const auto&, int index) { return ok(replies[static_cast<std::size_t>(index) % 4]); });
  const std::string summary = file("best-of-n.json");
  const auto run =
      run_kbench(common_flags(server, "--method best-of-n --samples 4 --json " + summary));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  ASSERT_EQ(server.requests().size(), 4u);  // the budget, exactly

  const std::vector<AgentSample> samples = samples_of_latest_run();
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(statuses(samples),
            (std::map<std::string, int>{
                {"compile_error", 1}, {"correct", 1}, {"incorrect", 1}, {"no_code", 1}}));
  std::set<int> indices;
  double best = 0;
  std::string best_verdict;
  for (const AgentSample& s : samples) {
    indices.insert(s.index);
    EXPECT_EQ(s.method, "best-of-n");
    EXPECT_EQ(s.round, 0);
    EXPECT_EQ(s.prompt_tokens, 100);
    EXPECT_EQ(s.completion_tokens, 40);
    EXPECT_EQ(s.prompt_hash.size(), 64u);
    EXPECT_EQ(s.result_id.has_value(), s.status != "no_code") << s.status;
    if (s.status == "correct") {
      ASSERT_TRUE(s.speedup.has_value());
      best = *s.speedup;
      best_verdict = s.speedup_verdict;
      EXPECT_FALSE(best_verdict.empty());
    }
    if (s.status == "no_code") {
      EXPECT_EQ(s.error, "the reply holds no code block");
    }
  }
  EXPECT_EQ(indices, (std::set<int>{0, 1, 2, 3}));

  // The prompt carries the ABI header, the workload's tensors and its semantics.
  const std::string body = server.requests()[0].body;
  EXPECT_NE(body.find("kb_run"), std::string::npos);
  EXPECT_NE(body.find("12p_RMSNorm"), std::string::npos);
  EXPECT_NE(body.find("KB_ABI_VERSION"), std::string::npos);

  // Hand-checked: 1 of 4 correct; one workload, solved; geomean = max(1, best); fast_0 = 1.
  const nlohmann::json m = nlohmann::json::parse(read_text(summary))["methods"]["best-of-n"];
  EXPECT_EQ(m["samples"], 4);
  EXPECT_EQ(m["correct_samples"], 1);
  EXPECT_DOUBLE_EQ(m["per_sample_correctness"].get<double>(), 0.25);
  EXPECT_EQ(m["workloads"], 1);
  EXPECT_EQ(m["solved"], 1);
  EXPECT_NEAR(m["geomean_speedup"].get<double>(), std::max(1.0, best), 1e-9);
  EXPECT_DOUBLE_EQ(m["fast_p"]["0"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m["fast_p"]["1"].get<double>(), best > 1 ? 1.0 : 0.0);
  EXPECT_DOUBLE_EQ(m["significantly_faster"].get<double>(), best_verdict == "faster" ? 1.0 : 0.0);
  EXPECT_EQ(m["failures"]["compile_error"], 1);
  EXPECT_EQ(m["failures"]["incorrect"], 1);
  EXPECT_EQ(m["failures"]["no_code"], 1);
  EXPECT_EQ(m["failures"]["slower"], best > 1 ? 0 : 1);

  // The report of this run alone, from the store, says what the run's summary said.
  const auto report = run_kbench("agent report --format json --run " +
                                 std::to_string(samples.front().run_id) + " --db " + db());
  ASSERT_EQ(report.exit_code, 0) << report.out;
  EXPECT_EQ(nlohmann::json::parse(report.out)["methods"]["best-of-n"], m);
}

TEST_F(AgentEndToEnd, IterativeFeedsBackEachVerdictAndRetriesA429) {
  // Request 0 is refused with 429 once; its retry gets the compile error. Then wrong, then correct.
  const std::vector<ScriptedResponse> script = {
      {429, R"({"error":{"message":"slow down"}})", {{"retry-after", "0"}}, 0},
      ok(kCompileErrorReply),
      ok(wrong_reply()),
      ok(correct_reply()),
      ok(correct_reply())};
  ScriptedLlmServer server([&](const auto&, int index) {
    return script[std::min<std::size_t>(static_cast<std::size_t>(index), script.size() - 1)];
  });
  const std::string log = file("iterative.jsonl");
  const auto run =
      run_kbench(common_flags(server, "--method iterative --samples 4 --request-log " + log));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);  // 4 samples, one retried

  const std::vector<AgentSample> samples = samples_of_latest_run();
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].status, "compile_error");
  EXPECT_EQ(samples[1].status, "incorrect");
  EXPECT_EQ(samples[2].status, "correct");
  EXPECT_EQ(samples[3].status, "correct");
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(samples[static_cast<std::size_t>(i)].parent, i - 1);
    EXPECT_EQ(samples[static_cast<std::size_t>(i)].round, i);
  }
  // Each round's request carries the previous verdict: the compiler's words, the error metrics,
  // then the timing.
  EXPECT_NE(requests[2].body.find("Verdict: compile_error"), std::string::npos);
  EXPECT_NE(requests[2].body.find("undefined_name"), std::string::npos);
  EXPECT_NE(requests[3].body.find("Verdict: incorrect"), std::string::npos);
  EXPECT_NE(requests[3].body.find("relative L2 error"), std::string::npos);
  EXPECT_NE(requests[4].body.find("Verdict: correct"), std::string::npos);
  EXPECT_NE(requests[4].body.find("speedup"), std::string::npos);
  EXPECT_NE(requests[4].body.find("roofline"), std::string::npos);
  // Iterative without context carries no context artifact.
  EXPECT_EQ(requests[1].body.find("Reference material for this target"), std::string::npos);
  // Without --analyze no loop analysis is made or fed back.
  EXPECT_EQ(requests[4].body.find("Where its time goes"), std::string::npos);

  // One log line per HTTP attempt, the 429 among them.
  std::ifstream lines(log);
  std::vector<nlohmann::json> entries;
  for (std::string line; std::getline(lines, line);) entries.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[0]["status"], 429);
}

TEST_F(AgentEndToEnd, AnalyzeFeedsBackTheHottestLoopsWithTheirSourceLinesAndRecordsThem) {
  ScriptedLlmServer server([&](const auto&, int) { return ok(correct_reply()); });
  const auto run = run_kbench(common_flags(server, "--method iterative --samples 2 --analyze"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::vector<AgentSample> samples = samples_of_latest_run();
  ASSERT_EQ(samples.size(), 2u);
  ASSERT_EQ(samples[0].status, "correct");
  ASSERT_TRUE(samples[0].result_id.has_value());

  // The record holds the analysis: loops with their iterations counted at the sample's size.
  ResultStore store = ResultStore::open(db());
  const auto result = store.result_by_id(*samples[0].result_id);
  ASSERT_TRUE(result.has_value());
  const nlohmann::json analysis = nlohmann::json::parse(result->analysis_json);
  ASSERT_FALSE(analysis.contains("error")) << analysis.dump();
  EXPECT_EQ(analysis["trips_size"], "smoke");
  ASSERT_FALSE(analysis["loops"].empty());
  const nlohmann::json& hottest = analysis["loops"][0];
  ASSERT_FALSE(hottest["candidate_lines"].empty()) << hottest.dump();

  // The next round's request carries it, quoting the hottest loop's first line of the sample's
  // own source.
  const nlohmann::json body = nlohmann::json::parse(requests[1].body);
  const std::string feedback = body["messages"].back()["content"].get<std::string>();
  EXPECT_NE(feedback.find("Where its time goes"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("1. "), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("cycles per iteration"), std::string::npos) << feedback;
  const int line = hottest["candidate_lines"][0].get<int>();
  std::istringstream code(samples[0].code);
  std::string text;
  for (int i = 0; i < line; ++i) std::getline(code, text);
  text = text.substr(text.find_first_not_of(" \t"));
  EXPECT_NE(feedback.find(std::to_string(line) + ": " + text.substr(0, 40)), std::string::npos)
      << "line " << line << " '" << text << "' not quoted in:\n"
      << feedback;
}

TEST_F(AgentEndToEnd, IterativeContextSendsTheContextArtifact) {
  ScriptedLlmServer server([&](const auto&, int) { return ok(correct_reply()); });
  const auto run = run_kbench(common_flags(server, "--method iterative-context --samples 2"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const auto& r : requests)
    EXPECT_NE(r.body.find("Reference material for this target"), std::string::npos);
  EXPECT_EQ(statuses(samples_of_latest_run()), (std::map<std::string, int>{{"correct", 2}}));
}

TEST_F(AgentEndToEnd, BeamReachesCorrectnessThenOptimizesWithPlansFromTheMenu) {
  // Phase 1 round 0: two chains, one wrong and one correct; phase 2: one parent, 1 plan x 2
  // implementations per step, until the budget of 6 is spent.
  ScriptedLlmServer server([&](const auto& request, int index) {
    if (index < 2) return ok(index == 0 ? wrong_reply() : correct_reply());
    // Phase 2 requests name their plan; answer with a correct kernel.
    EXPECT_NE(request.body.find("applying this optimization"), std::string::npos);
    return ok(correct_reply());
  });
  const auto run = run_kbench(
      common_flags(server,
                   "--method beam --samples 6 --beam-width 2 --plans 1 --implementations 2 "
                   "--max-concurrency 2"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(server.requests().size(), 6u);
  const std::vector<AgentSample> samples = samples_of_latest_run();
  ASSERT_EQ(samples.size(), 6u);
  int correctness = 0, optimization = 0;
  for (const AgentSample& s : samples) {
    if (s.phase == "correctness") {
      ++correctness;
      EXPECT_EQ(s.round, 0);
      EXPECT_TRUE(s.plan.empty());
    } else {
      ASSERT_EQ(s.phase, "optimization");
      ++optimization;
      EXPECT_FALSE(s.plan.empty());
      ASSERT_TRUE(s.parent.has_value());
      EXPECT_GE(s.round, 1);
    }
  }
  EXPECT_EQ(correctness, 2);
  EXPECT_EQ(optimization, 4);
}

TEST_F(AgentEndToEnd, ASlowServerTimesOutIntoAFailedSampleAndTheRunGoesOn) {
  ScriptedLlmServer server([&](const auto&, int index) {
    ScriptedResponse r = ok(correct_reply());
    // Beyond --request-timeout-s 2, with no retry. The server answers one connection at a time,
    // so the next request waits out the rest of this delay (1 s) within its own timeout.
    if (index == 0) r.delay_s = 3;
    return r;
  });
  const auto run = run_kbench(
      "agent --provider openai --base-url " + server.url() +
      "/v1 --model scripted --workload 12p --size smoke --time-budget-s 0.3 --max-retries 0 "
      "--request-timeout-s 2 --method iterative --samples 2 --db " +
      db());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const std::vector<AgentSample> samples = samples_of_latest_run();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].status, "llm_error");
  EXPECT_NE(samples[0].error.find("time"), std::string::npos) << samples[0].error;
  EXPECT_EQ(samples[1].status, "correct");
}

TEST_F(AgentEndToEnd, AnInterruptedRunResumesFromTheDatabaseWithoutAskingAgain) {
  std::atomic<pid_t> agent_pid{0};
  std::atomic<int> killed{0};
  ScriptedLlmServer server([&](const auto&, int index) {
    // The first attempt dies while waiting for its third reply: samples 0 and 1 are stored.
    if (index == 2 && killed.fetch_add(1) == 0 && agent_pid.load() > 0) {
      ::kill(agent_pid.load(), SIGKILL);
      return ScriptedResponse{500, "{}", {}, 0};
    }
    return ok(index % 2 == 0 ? wrong_reply() : correct_reply());
  });
  const std::string args = common_flags(server, "--method iterative --samples 4 --seed 7");
  const pid_t pid = spawn_kbench(args);
  ASSERT_GT(pid, 0);
  agent_pid = pid;
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  std::vector<AgentSample> before = samples_of_latest_run();
  ASSERT_EQ(before.size(), 2u);
  const std::size_t requests_before = server.requests().size();

  const auto rerun = run_kbench(args + " 2>&1");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out;
  EXPECT_NE(rerun.out.find("resuming run"), std::string::npos) << rerun.out;
  EXPECT_NE(rerun.out.find("2 sample(s) replayed"), std::string::npos) << rerun.out;
  // Only samples 2 and 3 were asked for again.
  EXPECT_EQ(server.requests().size(), requests_before + 2);
  const std::vector<AgentSample> after = samples_of_latest_run();
  ASSERT_EQ(after.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(after[i].index, static_cast<int>(i));
  EXPECT_EQ(after[0].run_id, before[0].run_id);
  EXPECT_EQ(after[0].created_at, before[0].created_at);
  // Sample 2's prompt rests on the replayed sample 1's verdict.
  EXPECT_NE(server.requests().back().body.find("Verdict:"), std::string::npos);
}

TEST_F(AgentEndToEnd, SigtermLetsTheSampleInFlightFinishAndTheRunResumes) {
  std::atomic<pid_t> agent_pid{0};
  std::atomic<int> signalled{0};
  ScriptedLlmServer server([&](const auto&, int index) {
    // SIGTERM while sample 1 is being asked for: it is still answered, evaluated and recorded.
    if (index == 1 && signalled.fetch_add(1) == 0 && agent_pid.load() > 0)
      ::kill(agent_pid.load(), SIGTERM);
    return ok(correct_reply());
  });
  const std::string args = common_flags(server, "--method iterative --samples 4 --seed 9");
  const std::string err_path = file("sigterm.err");
  const pid_t pid = spawn_kbench(args, err_path);
  ASSERT_GT(pid, 0);
  agent_pid = pid;
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string err = read_text(err_path);
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << err;
  EXPECT_NE(err.find("stopped by SIGTERM; run "), std::string::npos) << err;
  const std::vector<AgentSample> before = samples_of_latest_run();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[1].status, "correct");

  const auto rerun = run_kbench(args + " 2>&1");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out;
  EXPECT_NE(rerun.out.find("2 sample(s) replayed"), std::string::npos) << rerun.out;
  EXPECT_EQ(samples_of_latest_run().size(), 4u);
}

TEST_F(AgentEndToEnd, TheApiKeyReachesTheServerButNeitherTheStoreTheLogNorTheCandidate) {
  const std::string key = "sk-test-4f1d9c0e7b2a";
  // A candidate that fails when it can see any key in its environment, and is correct otherwise.
  const std::string probe = testing::wrap_kb_run(
      read_text(source_path("examples/12p_RMSNorm_fast.cpp")), "#include <cstdlib>\n",
      "  if (std::getenv(\"KBENCH_TEST_KEY\")) return 1;");
  ScriptedLlmServer server([&](const auto&, int) { return ok(fenced(probe)); });
  const std::string log = file("key.jsonl");
  ::setenv("KBENCH_TEST_KEY", key.c_str(), 1);
  const auto run = run_kbench(common_flags(
      server, "--method best-of-n --samples 1 --api-key-env KBENCH_TEST_KEY --request-log " + log));
  ::unsetenv("KBENCH_TEST_KEY");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].headers.at("authorization"), "Bearer " + key);
  // The candidate saw no key (it would have returned 1: a runtime error).
  EXPECT_EQ(statuses(samples_of_latest_run()), (std::map<std::string, int>{{"correct", 1}}));
  for (const std::string& path : {db(), db() + "-wal", log}) {
    if (!std::filesystem::exists(path)) continue;
    EXPECT_EQ(read_text(path).find(key), std::string::npos) << path << " holds the key";
  }
  EXPECT_EQ(run.out.find(key), std::string::npos);
}

TEST_F(AgentEndToEnd, NothingListeningStopsTheRunUnfinishedWithOneLine) {
  int port = 0;
  {
    ScriptedLlmServer closed([](const auto&, int) { return ok(""); });
    port = closed.port();
  }  // the port is free again: nothing listens there now
  const auto run = run_kbench(
      "agent --provider openai --base-url http://127.0.0.1:" + std::to_string(port) +
      "/v1 --model scripted --workload 12p --size smoke --max-retries 1 --method best-of-n "
      "--samples 2 --db " +
      db() + " 2>&1 >/dev/null");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("the same command resumes it"), std::string::npos) << run.out;
  // The error is one line, the last.
  const std::string last = run.out.substr(run.out.rfind('\n', run.out.size() - 2) + 1);
  EXPECT_EQ(last.rfind("kbench: the LLM request failed: ", 0), 0u) << run.out;
  EXPECT_EQ(std::count(last.begin(), last.end(), '\n'), 1) << run.out;
}

TEST(AgentCli, UsageErrorsExitTwoBeforeAnythingRuns) {
  const std::string db = kbench::testing::temp_db("agent_usage");
  for (const std::string args :
       {"agent --method greedy --workload 12p --model m", "agent --workload 12p --model m",
        "agent --method beam --model m", "agent --method beam --workload 12p",
        "agent --method beam --workload nope --model m",
        "agent --method beam --workload 12p --model m --samples 0",
        "agent --method beam --workload 12p --model m --provider gemini",
        "agent --method beam --workload 12p --model m --menu-dropout 1",
        "agent --method beam --workload 12p --model m --request-timeout-s inf",
        "agent --method beam --workload 12p --model m --time-budget-s nan",
        "agent --method beam --workload 12p --model m --base-url localhost:8088/v1",
        "agent --method beam --workload 12p --model m --base-url ftp://host/v1",
        "agent --method beam --workload 12p --model m --json /nonexistent/summary.json",
        "agent --method beam --workload 12p --model m --json /tmp", "agent report --format pdf"}) {
    const auto run = run_kbench(args + " --db " + db + " 2>&1");
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.out;
    EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << args << ": " << run.out;
  }
  EXPECT_FALSE(std::filesystem::exists(db));
}

}  // namespace
}  // namespace kbench::agents
