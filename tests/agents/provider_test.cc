// The LLM providers against the scripted loopback server: request shapes of both APIs, reply
// parsing, the API key's absence from logs and errors, retries and backoff, timeouts, failures
// that must not be retried, and the concurrency limit.
#include "agents/http_client.h"
#include "agents/http_provider.h"
#include "agents/llm.h"
#include "agents/retry.h"
#include "agents/scripted_llm_server.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace kbench::agents {
namespace {

using json = nlohmann::json;
using testing::RecordedRequest;
using testing::ScriptedLlmServer;
using testing::ScriptedResponse;

constexpr const char* kKeyEnv = "KBENCH_PROVIDER_TEST_KEY";
constexpr const char* kFakeKey = "sk-test-do-not-log-4f2a9c";
constexpr const char* kUnsetEnv = "KBENCH_PROVIDER_TEST_UNSET";

class ProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Loopback must never go through a proxy the environment may name.
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
    ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    ::setenv(kKeyEnv, kFakeKey, 1);
    ::unsetenv(kUnsetEnv);
    dir_ = std::filesystem::temp_directory_path() /
           ("kbench-provider-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ProviderOptions options(const ScriptedLlmServer& server, const std::string& provider) const {
    ProviderOptions o;
    o.provider = provider;
    o.base_url = server.url() + (provider == "openai" ? "/v1" : "");
    o.model = "test-model";
    o.api_key_env = kKeyEnv;
    o.timeout_s = 5;
    o.max_retries = 2;
    o.backoff_initial_s = 0.01;
    o.backoff_max_s = 0.05;
    o.max_concurrency = 4;
    return o;
  }

  std::string log_path() const { return (dir_ / "requests.jsonl").string(); }

  std::vector<json> log_lines() const {
    std::ifstream in(log_path());
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }

  std::string log_text() const {
    std::ifstream in(log_path());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::filesystem::path dir_;
};

ChatRequest sample_request() {
  ChatRequest request;
  request.system = "You write kernels.";
  request.messages = {{"user", "first"}, {"assistant", "draft"}, {"user", "improve it"}};
  request.max_tokens = 77;
  request.temperature = 0.25;
  request.seed = 42;
  return request;
}

std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const LlmError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no LlmError";
  return "";
}

TEST_F(ProviderTest, OpenAiRequestShapeAndReply) {
  ScriptedLlmServer server([](const RecordedRequest&, int) {
    return ScriptedResponse{200, ScriptedLlmServer::openai_body("hello kernel", 11, 22), {}, 0};
  });
  ProviderOptions o = options(server, "openai");
  o.base_url += "/";  // a trailing slash must not double in the path
  const auto provider = make_provider(o);
  const ChatReply reply = provider->complete(sample_request());

  ASSERT_EQ(server.requests().size(), 1u);
  const RecordedRequest seen = server.requests().at(0);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.path, "/v1/chat/completions");
  EXPECT_EQ(seen.headers.at("authorization"), std::string("Bearer ") + kFakeKey);
  EXPECT_EQ(seen.headers.at("content-type"), "application/json");
  EXPECT_EQ(seen.headers.count("expect"), 0u);
  const json body = json::parse(seen.body);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["max_tokens"], 77);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.25);
  EXPECT_EQ(body["seed"], 42);
  ASSERT_EQ(body["messages"].size(), 4u);
  EXPECT_EQ(body["messages"][0], json({{"role", "system"}, {"content", "You write kernels."}}));
  EXPECT_EQ(body["messages"][1], json({{"role", "user"}, {"content", "first"}}));
  EXPECT_EQ(body["messages"][2], json({{"role", "assistant"}, {"content", "draft"}}));
  EXPECT_EQ(body["messages"][3], json({{"role", "user"}, {"content", "improve it"}}));

  EXPECT_EQ(reply.text, "hello kernel");
  EXPECT_EQ(reply.prompt_tokens, 11);
  EXPECT_EQ(reply.completion_tokens, 22);
  EXPECT_EQ(reply.model, "scripted-model");
  EXPECT_EQ(reply.finish_reason, "stop");
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_GT(reply.latency_s, 0);
  EXPECT_EQ(provider->describe(), "openai " + server.url() + "/v1 test-model");
}

TEST_F(ProviderTest, OpenAiWithoutKeySystemOrSeedSendsNone) {
  ScriptedLlmServer server([](const RecordedRequest&, int) {
    return ScriptedResponse{200, ScriptedLlmServer::openai_body("ok"), {}, 0};
  });
  ProviderOptions o = options(server, "openai");
  o.api_key_env = kUnsetEnv;
  ChatRequest request;
  request.messages = {{"user", "hi"}};
  make_provider(o)->complete(request);
  const RecordedRequest seen = server.requests().at(0);
  EXPECT_EQ(seen.headers.count("authorization"), 0u);
  const json body = json::parse(seen.body);
  EXPECT_FALSE(body.contains("seed"));
  ASSERT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
}

TEST_F(ProviderTest, AnthropicRequestShapeAndReply) {
  ScriptedLlmServer server([](const RecordedRequest&, int) {
    const json body = {{"type", "message"},
                       {"model", "claude-scripted"},
                       {"content",
                        {{{"type", "thinking"}, {"thinking", "hmm"}},
                         {{"type", "text"}, {"text", "part one, "}},
                         {{"type", "text"}, {"text", "part two"}}}},
                       {"stop_reason", "max_tokens"},
                       {"usage", {{"input_tokens", 5}, {"output_tokens", 6}}}};
    return ScriptedResponse{200, body.dump(), {}, 0};
  });
  const auto provider = make_provider(options(server, "anthropic"));
  const ChatReply reply = provider->complete(sample_request());

  const RecordedRequest seen = server.requests().at(0);
  EXPECT_EQ(seen.path, "/v1/messages");
  EXPECT_EQ(seen.headers.at("x-api-key"), kFakeKey);
  EXPECT_EQ(seen.headers.at("anthropic-version"), "2023-06-01");
  EXPECT_EQ(seen.headers.count("authorization"), 0u);
  const json body = json::parse(seen.body);
  EXPECT_EQ(body["system"], "You write kernels.");
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["max_tokens"], 77);
  ASSERT_EQ(body["messages"].size(), 3u);  // the system prompt is not a message
  EXPECT_EQ(body["messages"][0]["role"], "user");

  EXPECT_EQ(reply.text, "part one, part two");
  EXPECT_EQ(reply.prompt_tokens, 5);
  EXPECT_EQ(reply.completion_tokens, 6);
  EXPECT_EQ(reply.model, "claude-scripted");
  EXPECT_EQ(reply.finish_reason, "max_tokens");
  EXPECT_EQ(provider->describe(), "anthropic " + server.url() + " test-model");
}

TEST_F(ProviderTest, AnthropicBodyHelperParses) {
  ScriptedLlmServer server([](const RecordedRequest&, int) {
    return ScriptedResponse{200, ScriptedLlmServer::anthropic_body("text", 3, 4), {}, 0};
  });
  ProviderOptions o = options(server, "anthropic");
  o.api_key_env = kUnsetEnv;
  const ChatReply reply = make_provider(o)->complete(sample_request());
  EXPECT_EQ(reply.text, "text");
  EXPECT_EQ(reply.prompt_tokens, 3);
  EXPECT_EQ(reply.completion_tokens, 4);
  EXPECT_EQ(server.requests().at(0).headers.count("x-api-key"), 0u);
}

TEST_F(ProviderTest, RateLimitThenSuccessIsLoggedWithoutTheKey) {
  ScriptedLlmServer server([](const RecordedRequest&, int index) {
    if (index == 0) {
      // The body echoes the key, as a confused proxy might: it must still stay out of the log.
      return ScriptedResponse{
          429,
          json{{"error", {{"message", std::string("slow down ") + kFakeKey}}}}.dump(),
          {{"retry-after", "0"}},
          0};
    }
    return ScriptedResponse{200, ScriptedLlmServer::openai_body("second time", 7, 8), {}, 0};
  });
  ProviderOptions o = options(server, "openai");
  o.request_log_path = log_path();
  const auto provider = make_provider(o);
  const ChatReply reply = provider->complete(sample_request());
  EXPECT_EQ(reply.text, "second time");
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(server.requests().size(), 2u);

  const std::vector<json> lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["attempt"], 1);
  EXPECT_EQ(lines[0]["status"], 429);
  EXPECT_TRUE(lines[0]["error"].get<std::string>().find("429") != std::string::npos);
  EXPECT_TRUE(lines[0]["prompt_tokens"].is_null());
  EXPECT_EQ(lines[1]["attempt"], 2);
  EXPECT_EQ(lines[1]["status"], 200);
  EXPECT_EQ(lines[1]["prompt_tokens"], 7);
  EXPECT_EQ(lines[1]["completion_tokens"], 8);
  EXPECT_TRUE(lines[1]["error"].is_null());
  EXPECT_EQ(lines[1]["response_text"], "second time");
  EXPECT_EQ(lines[1]["provider"], "openai");
  EXPECT_EQ(lines[1]["model"], "test-model");
  EXPECT_EQ(lines[1]["url"], server.url() + "/v1/chat/completions");
  EXPECT_EQ(lines[1]["request"]["messages"][0]["content"], "You write kernels.");
  EXPECT_EQ(lines[1]["time"].get<std::string>().size(), 24u);  // 2026-12-01T16:23:10.123Z
  const std::string text = log_text();
  EXPECT_EQ(text.find(kFakeKey), std::string::npos);
  EXPECT_EQ(text.find("Bearer"), std::string::npos);
  EXPECT_EQ(text.find("x-api-key"), std::string::npos);
  EXPECT_EQ(provider->describe().find(kFakeKey), std::string::npos);
}

TEST_F(ProviderTest, UnauthorizedFailsAtOnceNamingStatusAndMessageButNotKey) {
  ScriptedLlmServer server([](const RecordedRequest&, int) {
    return ScriptedResponse{401,
                            json{{"type", "error"},
                                 {"error",
                                  {{"type", "authentication_error"},
                                   {"message", std::string("invalid x-api-key: ") + kFakeKey}}}}
                                .dump(),
                            {},
                            0};
  });
  const auto provider = make_provider(options(server, "anthropic"));
  const std::string message = what_of([&] { provider->complete(sample_request()); });
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_NE(message.find("401"), std::string::npos) << message;
  EXPECT_NE(message.find("invalid x-api-key"), std::string::npos) << message;
  EXPECT_EQ(message.find(kFakeKey), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(ProviderTest, BadRequestAndNotFoundAreNotRetried) {
  for (const int status : {400, 403, 404}) {
    ScriptedLlmServer server([status](const RecordedRequest&, int) {
      return ScriptedResponse{status, R"({"error":{"message":"nope"}})", {}, 0};
    });
    const auto provider = make_provider(options(server, "openai"));
    const std::string message = what_of([&] { provider->complete(sample_request()); });
    EXPECT_EQ(server.requests().size(), 1u) << status;
    EXPECT_NE(message.find(std::to_string(status)), std::string::npos) << message;
  }
}

TEST_F(ProviderTest, ServerErrorsAreRetriedThenFail) {
  ScriptedLlmServer server([](const RecordedRequest&, int) {
    return ScriptedResponse{500, R"({"error":{"message":"upstream exploded"}})", {}, 0};
  });
  ProviderOptions o = options(server, "openai");
  o.request_log_path = log_path();
  const auto provider = make_provider(o);
  const std::string message = what_of([&] { provider->complete(sample_request()); });
  EXPECT_EQ(server.requests().size(), static_cast<std::size_t>(o.max_retries + 1));
  EXPECT_EQ(log_lines().size(), static_cast<std::size_t>(o.max_retries + 1));
  EXPECT_NE(message.find("HTTP 500"), std::string::npos) << message;
  EXPECT_NE(message.find("upstream exploded"), std::string::npos) << message;
  EXPECT_NE(message.find("after 3 attempts"), std::string::npos) << message;
}

TEST_F(ProviderTest, OverloadedThenSuccess) {
  ScriptedLlmServer server([](const RecordedRequest&, int index) {
    if (index < 2) return ScriptedResponse{index == 0 ? 529 : 503, "", {}, 0};
    return ScriptedResponse{200, ScriptedLlmServer::anthropic_body("fine"), {}, 0};
  });
  const ChatReply reply = make_provider(options(server, "anthropic"))->complete(sample_request());
  EXPECT_EQ(reply.text, "fine");
  EXPECT_EQ(reply.attempts, 3);
}

TEST_F(ProviderTest, TimeoutIsRetriedThenFails) {
  ScriptedLlmServer server([](const RecordedRequest&, int) {
    return ScriptedResponse{200, ScriptedLlmServer::openai_body("too late"), {}, 1.5};
  });
  ProviderOptions o = options(server, "openai");
  o.timeout_s = 0.5;
  o.max_retries = 1;
  o.request_log_path = log_path();
  const auto provider = make_provider(o);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = what_of([&] { provider->complete(sample_request()); });
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(message.find("timeout"), std::string::npos) << message;
  EXPECT_NE(message.find("after 2 attempts"), std::string::npos) << message;
  EXPECT_GE(elapsed, 1.0);
  EXPECT_LT(elapsed, 1.45);  // both attempts were cut at 0.5 s, not served after the 1.5 s delay
  const std::vector<json> lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0]["status"].is_null());
  EXPECT_GE(lines[0]["latency_s"].get<double>(), 0.45);
}

TEST_F(ProviderTest, ConnectionRefusedIsRetriedThenFails) {
  int port;
  {
    ScriptedLlmServer closed([](const RecordedRequest&, int) { return ScriptedResponse{}; });
    port = closed.port();
  }
  ProviderOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  o.model = "m";
  o.api_key_env = kUnsetEnv;
  o.max_retries = 1;
  o.backoff_initial_s = 0.01;
  o.request_log_path = log_path();
  const std::string message = what_of([&] { make_provider(o)->complete(sample_request()); });
  EXPECT_NE(message.find("no response"), std::string::npos) << message;
  EXPECT_EQ(log_lines().size(), 2u);
}

TEST_F(ProviderTest, MalformedSuccessFailsAtOnce) {
  for (const std::string& bad : {std::string("not json at all"), std::string(R"({"choices":[]})"),
                                 std::string(R"({"choices":[{"message":{}}]})")}) {
    ScriptedLlmServer server([bad](const RecordedRequest&, int) {
      return ScriptedResponse{200, bad, {}, 0};
    });
    const auto provider = make_provider(options(server, "openai"));
    const std::string message = what_of([&] { provider->complete(sample_request()); });
    EXPECT_EQ(server.requests().size(), 1u) << bad;
    EXPECT_NE(message.find("unparsable response (HTTP 200)"), std::string::npos) << message;
  }
}

TEST_F(ProviderTest, RetryAfterWinsAndIsCapped) {
  ScriptedLlmServer server([](const RecordedRequest&, int index) {
    if (index == 0) return ScriptedResponse{429, "", {{"Retry-After", "7"}}, 0};
    if (index == 1) return ScriptedResponse{503, "", {}, 0};
    return ScriptedResponse{200, ScriptedLlmServer::openai_body("ok"), {}, 0};
  });
  ProviderOptions o = options(server, "openai");
  o.backoff_initial_s = 0.5;
  o.backoff_max_s = 5;
  const auto provider = make_provider(o);
  std::vector<double> sleeps;
  dynamic_cast<HttpProvider&>(*provider).set_sleep_for_testing(
      [&sleeps](double s) { sleeps.push_back(s); });
  EXPECT_EQ(provider->complete(sample_request()).attempts, 3);
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_DOUBLE_EQ(sleeps[0], 5);  // Retry-After 7 s, capped at backoff_max_s
  EXPECT_GT(sleeps[1], 0.5);       // the second retry's 1 s, jittered into (0.5, 1]
  EXPECT_LE(sleeps[1], 1.0);
}

// With one slot, three callers' requests run one after another, each within its timeout. The
// control (three slots) proves the test can tell: the serial server then makes the last caller
// wait for the other two, past its timeout.
TEST_F(ProviderTest, ConcurrencyLimitHoldsRequestsBack) {
  auto run = [&](int max_concurrency) {
    ScriptedLlmServer server([](const RecordedRequest&, int) {
      return ScriptedResponse{200, ScriptedLlmServer::openai_body("ok"), {}, 0.3};
    });
    ProviderOptions o = options(server, "openai");
    o.max_concurrency = max_concurrency;
    o.timeout_s = 0.75;
    o.max_retries = 0;
    const auto provider = make_provider(o);
    std::atomic<int> failures = 0;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&] {
        try {
          provider->complete(sample_request());
        } catch (const LlmError&) {
          ++failures;
        }
      });
    }
    for (auto& t : threads) t.join();
    return failures.load();
  };
  EXPECT_EQ(run(1), 0);
  EXPECT_GT(run(3), 0);
}

TEST(ProviderOptionsTest, MakeProviderRejectsBadOptions) {
  ProviderOptions o;
  o.model = "m";
  o.provider = "gemini";
  EXPECT_THROW(make_provider(o), std::invalid_argument);
  o.provider = "anthropic";
  o.model = "";
  EXPECT_THROW(make_provider(o), std::invalid_argument);
  o.model = "m";
  o.max_concurrency = 0;
  EXPECT_THROW(make_provider(o), std::invalid_argument);
}

TEST(ProviderOptionsTest, DefaultEndpoints) {
  ProviderOptions o;
  o.model = "m";
  o.api_key_env = kUnsetEnv;
  EXPECT_EQ(make_provider(o)->describe(), "openai https://api.openai.com/v1 m");
  o.provider = "anthropic";
  EXPECT_EQ(make_provider(o)->describe(), "anthropic https://api.anthropic.com m");
}

TEST(RetryPolicyTest, RetryableStatuses) {
  for (const int status : {429, 500, 502, 503, 504, 529}) EXPECT_TRUE(is_retryable_status(status));
  for (const int status : {200, 400, 401, 403, 404, 422}) EXPECT_FALSE(is_retryable_status(status));
}

TEST(RetryPolicyTest, ParseRetryAfter) {
  EXPECT_EQ(parse_retry_after("0"), 0.0);
  EXPECT_EQ(parse_retry_after(" 3 "), 3.0);
  EXPECT_EQ(parse_retry_after("2.5"), 2.5);
  EXPECT_EQ(parse_retry_after("-1"), std::nullopt);
  EXPECT_EQ(parse_retry_after(""), std::nullopt);
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
}

TEST(RetryPolicyTest, BackoffSchedule) {
  const BackoffPolicy policy{1, 60};
  // No jitter (0): 1, 2, 4, 8, 16, 32, then the cap.
  const double expected[] = {1, 2, 4, 8, 16, 32, 60, 60};
  for (int retry = 0; retry < 8; ++retry) {
    EXPECT_DOUBLE_EQ(backoff_delay_s(retry, policy, 0), expected[retry]) << retry;
  }
  EXPECT_DOUBLE_EQ(backoff_delay_s(1, policy, 0.5), 1.5);         // 2 s scaled by 1 - 0.5 * 0.5
  EXPECT_DOUBLE_EQ(backoff_delay_s(10, policy, 0.5), 45);         // jitter applies to the cap too
  EXPECT_DOUBLE_EQ(backoff_delay_s(1000, policy, 0), 60);         // no overflow for absurd counts
  EXPECT_DOUBLE_EQ(backoff_delay_s(3, policy, 0.9, 5.0), 5);      // Retry-After wins, no jitter
  EXPECT_DOUBLE_EQ(backoff_delay_s(0, policy, 0.9, 1000.0), 60);  // ... but is capped
  EXPECT_DOUBLE_EQ(backoff_delay_s(0, policy, 0.9, 0.0), 0);
}

TEST(ProviderErrorMessageTest, ReadsBothApisAndFallsBack) {
  EXPECT_EQ(provider_error_message(R"({"error":{"message":"Rate limit","type":"x"}})"),
            "Rate limit");
  EXPECT_EQ(provider_error_message(
                R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"),
            "Overloaded");
  EXPECT_EQ(provider_error_message(R"({"error":"model not loaded"})"), "model not loaded");
  EXPECT_EQ(provider_error_message("<html>\nBad Gateway\n</html>"), "<html> Bad Gateway </html>");
  EXPECT_EQ(provider_error_message(""), "(empty body)");
}

// The server's 100-continue path: a client that asks for it gets the interim reply at once
// instead of waiting out curl's one-second fallback.
TEST(ScriptedServerTest, AnswersExpectContinueAndReadsLargeBodies) {
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  ScriptedLlmServer server([](const RecordedRequest& request, int) {
    return ScriptedResponse{200, std::to_string(request.body.size()), {{"x-seen", "1"}}, 0};
  });
  const std::string body(300000, 'x');
  const auto start = std::chrono::steady_clock::now();
  const HttpResponse response = http_post(server.url() + "/big", {"Expect: 100-continue"}, body, 5);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(response.status, 200) << response.error;
  EXPECT_EQ(response.body, "300000");
  EXPECT_EQ(response.headers.at("x-seen"), "1");
  EXPECT_EQ(response.headers.at("content-type"), "application/json");
  EXPECT_LT(elapsed, 0.9);
  const RecordedRequest seen = server.requests().at(0);
  EXPECT_EQ(seen.path, "/big");
  EXPECT_EQ(seen.headers.at("expect"), "100-continue");
  EXPECT_EQ(seen.body, body);
}

// A server that answers with more than the cap (a misconfigured proxy, a stream that never ends)
// is cut off with an error that says so, not held in memory whole.
TEST(ScriptedServerTest, AReplyLargerThanTheCapIsCutOffAndSaysSo) {
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  ScriptedLlmServer server([](const RecordedRequest&, int) {
    return ScriptedResponse{200, std::string(4 << 20, 'x'), {}, 0};
  });
  const HttpResponse cut = http_post(server.url() + "/huge", {}, "{}", 10, 1 << 20);
  EXPECT_EQ(cut.status, 0);
  EXPECT_TRUE(cut.body.empty());
  EXPECT_NE(cut.error.find("larger than 1048576 bytes"), std::string::npos) << cut.error;
  const HttpResponse whole = http_post(server.url() + "/huge", {}, "{}", 10, 8 << 20);
  EXPECT_EQ(whole.status, 200) << whole.error;
  EXPECT_EQ(whole.body.size(), std::size_t{4} << 20);
}

TEST(ScriptedServerTest, StopsPromptlyDuringADelay) {
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  std::thread client;
  const auto start = std::chrono::steady_clock::now();
  {
    ScriptedLlmServer server([](const RecordedRequest&, int) {
      return ScriptedResponse{200, "{}", {}, 30};
    });
    client = std::thread([url = server.url()] { http_post(url + "/slow", {}, "{}", 2); });
    while (server.requests().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  client.join();
  EXPECT_LT(elapsed, 1.5);
}

}  // namespace
}  // namespace kbench::agents
