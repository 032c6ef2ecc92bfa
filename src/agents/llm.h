// The one interface every LLM provider implements (OpenAI-compatible Chat Completions, Anthropic
// Messages), and what a method needs of a reply: text, token counts, latency.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kbench::agents {

struct ChatMessage {
  std::string role;  // "user" | "assistant"
  std::string content;
};

struct ChatRequest {
  std::string system;                 // may be empty
  std::vector<ChatMessage> messages;  // at least one; the last is the user's
  int max_tokens = 4096;
  double temperature = 0.7;
  std::optional<std::uint64_t> seed;  // sent where the API takes one (OpenAI-compatible)
};

struct ChatReply {
  std::string text;
  int prompt_tokens = 0;  // as the response reports them (0 where it reports none)
  int completion_tokens = 0;
  double latency_s = 0;  // of the successful attempt
  int attempts = 1;      // HTTP requests it took, retries included
  std::string model;     // as the response names it
  std::string finish_reason;
};

// A request that failed for good: after the retries, or at once for errors retrying cannot mend
// (400, 401, 404, an unparsable body). One line naming the status and the provider's message; never
// the API key.
// `fatal`: no later request would fare better (the key is refused, the model or endpoint does not
// exist, nothing listens at the URL); an agent run stops instead of failing every sample alike.
class LlmError : public std::runtime_error {
 public:
  explicit LlmError(const std::string& what, bool fatal = false)
      : std::runtime_error(what), fatal_(fatal) {}
  bool fatal() const { return fatal_; }

 private:
  bool fatal_;
};

struct ProviderOptions {
  std::string provider = "openai";  // "openai" | "anthropic"
  std::string base_url;             // empty: the provider's public endpoint
  std::string model;
  std::string api_key_env;  // empty: OPENAI_API_KEY / ANTHROPIC_API_KEY; unset variable: no key
  double timeout_s = 600;   // per HTTP request
  int max_retries = 4;      // on 429, 5xx and transport errors
  double backoff_initial_s = 1;  // doubled per retry, capped, jittered; Retry-After wins
  double backoff_max_s = 60;
  int max_concurrency = 4;       // requests in flight at once through one provider
  std::string request_log_path;  // JSON lines, one per HTTP attempt; empty: none
};

class LlmProvider {
 public:
  virtual ~LlmProvider() = default;
  // Thread-safe; blocks while max_concurrency requests are in flight. Throws LlmError.
  virtual ChatReply complete(const ChatRequest& request) = 0;
  // "openai http://127.0.0.1:8000/v1 qwen2.5-coder": for logs and records (never the key).
  virtual std::string describe() const = 0;
};

// Throws std::invalid_argument for an unknown provider name or a missing model.
std::unique_ptr<LlmProvider> make_provider(const ProviderOptions& options);

}  // namespace kbench::agents
