// What the OpenAI-compatible and Anthropic providers share: the concurrency limit, the retry loop
// with backoff, error lines that name the status and the server's message (never the key), and
// the request log. Each API supplies only its URL, headers, request body and reply parsing.
#pragma once

#include "agents/llm.h"
#include "agents/request_log.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <semaphore>
#include <string>
#include <vector>

namespace kbench::agents {

class HttpProvider : public LlmProvider {
 public:
  ChatReply complete(const ChatRequest& request) final;
  std::string describe() const final;

  // Replaces the sleep between attempts (tests; the default is std::this_thread::sleep_for).
  void set_sleep_for_testing(std::function<void(double seconds)> sleep);

 protected:
  // `name`: "openai" | "anthropic"; `base_url`: without a trailing slash; `api_key`: nullopt for
  // none. Throws std::runtime_error when the request log cannot be opened.
  HttpProvider(std::string name, std::string base_url, std::string url,
               const ProviderOptions& options, std::optional<std::string> api_key);

  const std::string& model() const { return options_.model; }
  // The model a reply names, else the one asked for (a server may omit it).
  std::string reply_model(const nlohmann::json& body) const;

  // The API's request body for `request`.
  virtual nlohmann::json request_body(const ChatRequest& request) const = 0;
  // Its headers beyond Content-Type, the key's among them when there is one.
  virtual std::vector<std::string> auth_headers(
      const std::optional<std::string>& api_key) const = 0;
  // Text, tokens, model and finish reason from a 200's JSON; throws std::exception (any kind)
  // when the body is not the shape the API promises.
  virtual ChatReply parse_reply(const nlohmann::json& body) const = 0;

 private:
  std::string redact(std::string text) const;
  double jitter();

  std::string name_;
  std::string base_url_;
  std::string url_;
  ProviderOptions options_;
  std::optional<std::string> api_key_;
  std::counting_semaphore<> slots_;
  std::unique_ptr<RequestLog> log_;
  std::function<void(double)> sleep_;
  std::mutex rng_mutex_;
  std::mt19937_64 rng_;
};

// The server's own explanation in an error body: error.message (OpenAI and Anthropic alike), else
// the body's start, as one line.
std::string provider_error_message(const std::string& body);

// Appends `messages` to `array` as the {"role", "content"} objects both APIs take.
void append_chat_messages(nlohmann::json& array, const std::vector<ChatMessage>& messages);

// The reply's finish reason from `object[key]`, and its token counts from the body's "usage" object
// under the API's names for them; what a reply leaves out stays as ChatReply's default.
void read_finish_reason(const nlohmann::json& object, const char* key, ChatReply& reply);
void read_token_usage(const nlohmann::json& body, const char* prompt_key,
                      const char* completion_key, ChatReply& reply);

// `options.base_url` without trailing slashes, or `default_url` where it is empty.
std::string base_url_or(const ProviderOptions& options, const char* default_url);

// The two APIs. `base_url` empty: the public endpoint. Used by make_provider().
std::unique_ptr<LlmProvider> make_openai_provider(const ProviderOptions& options,
                                                  std::optional<std::string> api_key);
std::unique_ptr<LlmProvider> make_anthropic_provider(const ProviderOptions& options,
                                                     std::optional<std::string> api_key);

}  // namespace kbench::agents
