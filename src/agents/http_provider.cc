// The retry loop, the concurrency limit and the request log shared by both APIs
// (src/agents/http_provider.h).
#include "agents/http_provider.h"

#include "agents/http_client.h"
#include "agents/retry.h"

#include <chrono>
#include <stdexcept>
#include <thread>

namespace kbench::agents {
namespace {

using json = nlohmann::json;

// Replies worth keeping whole are code-sized; 64 KiB holds any of them while keeping a run of a
// few hundred samples' log in the tens of megabytes.
constexpr std::size_t kLoggedTextBytes = 64 * 1024;
// An error line quotes the server's message, not a page of HTML from a misconfigured proxy.
constexpr std::size_t kQuotedMessageBytes = 300;

std::string one_line(std::string text, std::size_t max_bytes) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.size() > max_bytes) text = truncate_utf8(text, max_bytes) + "...";
  return text;
}

void sleep_seconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// Holds one of the provider's in-flight slots for the lifetime of one HTTP attempt.
class SlotGuard {
 public:
  explicit SlotGuard(std::counting_semaphore<>& slots) : slots_(slots) { slots_.acquire(); }
  ~SlotGuard() { slots_.release(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;

 private:
  std::counting_semaphore<>& slots_;
};

std::ptrdiff_t checked_concurrency(int max_concurrency) {
  if (max_concurrency < 1) throw std::invalid_argument("max_concurrency must be at least 1");
  return max_concurrency;
}

}  // namespace

std::string HttpProvider::reply_model(const nlohmann::json& body) const {
  const auto it = body.find("model");
  return it != body.end() && it->is_string() ? it->get<std::string>() : model();
}

void append_chat_messages(json& array, const std::vector<ChatMessage>& messages) {
  for (const ChatMessage& message : messages)
    array.push_back({{"role", message.role}, {"content", message.content}});
}

void read_finish_reason(const json& object, const char* key, ChatReply& reply) {
  if (const auto it = object.find(key); it != object.end() && it->is_string())
    reply.finish_reason = it->get<std::string>();
}

void read_token_usage(const json& body, const char* prompt_key, const char* completion_key,
                      ChatReply& reply) {
  if (const auto usage = body.find("usage"); usage != body.end() && usage->is_object()) {
    reply.prompt_tokens = usage->value(prompt_key, 0);
    reply.completion_tokens = usage->value(completion_key, 0);
  }
}

std::string base_url_or(const ProviderOptions& options, const char* default_url) {
  std::string base = options.base_url.empty() ? default_url : options.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

std::string provider_error_message(const std::string& body) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    const auto error = parsed.find("error");
    if (error != parsed.end()) {
      if (error->is_object()) {
        const auto message = error->find("message");
        if (message != error->end() && message->is_string()) {
          return one_line(message->get<std::string>(), kQuotedMessageBytes);
        }
      } else if (error->is_string()) {  // some OpenAI-compatible servers: {"error": "..."}
        return one_line(error->get<std::string>(), kQuotedMessageBytes);
      }
    }
  }
  if (body.empty()) return "(empty body)";
  return one_line(body, kQuotedMessageBytes);
}

HttpProvider::HttpProvider(std::string name, std::string base_url, std::string url,
                           const ProviderOptions& options, std::optional<std::string> api_key)
    : name_(std::move(name)),
      base_url_(std::move(base_url)),
      url_(std::move(url)),
      options_(options),
      api_key_(std::move(api_key)),
      slots_(checked_concurrency(options.max_concurrency)),
      sleep_(sleep_seconds),
      rng_(std::random_device{}()) {
  if (options_.max_retries < 0) throw std::invalid_argument("max_retries must not be negative");
  if (!(options_.timeout_s > 0)) throw std::invalid_argument("timeout_s must be positive");
  if (!options_.request_log_path.empty()) {
    log_ = std::make_unique<RequestLog>(options_.request_log_path);
  }
}

std::string HttpProvider::describe() const {
  return name_ + " " + base_url_ + " " + model();
}

void HttpProvider::set_sleep_for_testing(std::function<void(double)> sleep) {
  sleep_ = std::move(sleep);
}

std::string HttpProvider::redact(std::string text) const {
  // A server may echo what it was sent (a proxy's error page, a debug endpoint): the key must not
  // reach an error line or the log through it.
  if (!api_key_ || api_key_->empty()) return text;
  for (auto pos = text.find(*api_key_); pos != std::string::npos; pos = text.find(*api_key_, pos)) {
    text.replace(pos, api_key_->size(), "[redacted]");
  }
  return text;
}

double HttpProvider::jitter() {
  std::lock_guard<std::mutex> lock(rng_mutex_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
}

ChatReply HttpProvider::complete(const ChatRequest& request) {
  const json body = request_body(request);
  const std::string payload = body.dump(-1, ' ', false, json::error_handler_t::replace);
  // An empty Expect: stops curl from waiting for "100 Continue" before sending a large body.
  std::vector<std::string> headers = {"Content-Type: application/json", "Expect:"};
  for (auto& header : auth_headers(api_key_)) headers.push_back(std::move(header));
  const BackoffPolicy policy{options_.backoff_initial_s, options_.backoff_max_s};

  for (int attempt = 1;; ++attempt) {
    HttpResponse response;
    double latency_s = 0;
    {
      SlotGuard slot(slots_);
      const auto start = std::chrono::steady_clock::now();
      response = http_post(url_, headers, payload, options_.timeout_s);
      latency_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    std::optional<ChatReply> reply;
    std::string failure;
    bool retryable = false;
    if (response.status == 0) {
      failure = "no response: " + one_line(response.error, kQuotedMessageBytes);
      retryable = true;
    } else if (response.status >= 200 && response.status <= 299) {
      try {
        reply = parse_reply(json::parse(response.body));
      } catch (const std::exception& e) {
        failure = "unparsable response (HTTP " + std::to_string(response.status) +
                  "): " + one_line(e.what(), kQuotedMessageBytes);
      }
    } else {
      failure =
          "HTTP " + std::to_string(response.status) + ": " + provider_error_message(response.body);
      retryable = is_retryable_status(response.status);
    }

    if (log_) {
      json entry = {{"time", iso8601_now()},
                    {"provider", name_},
                    {"url", url_},
                    {"model", model()},
                    {"attempt", attempt},
                    {"status", response.status == 0 ? json(nullptr) : json(response.status)},
                    {"latency_s", latency_s},
                    {"prompt_tokens", reply ? json(reply->prompt_tokens) : json(nullptr)},
                    {"completion_tokens", reply ? json(reply->completion_tokens) : json(nullptr)},
                    {"error", reply ? json(nullptr) : json(redact(failure))},
                    {"request", body}};
      const std::string& text =
          reply ? reply->text : (response.status == 0 ? response.error : response.body);
      entry["response_text"] = redact(truncate_utf8(text, kLoggedTextBytes));
      log_->append(entry);
    }

    if (reply) {
      reply->latency_s = latency_s;
      reply->attempts = attempt;
      return *reply;
    }
    if (!retryable || attempt > options_.max_retries) {
      std::string line = name_ + ": " + failure + " (" + url_;
      if (attempt > 1) line += ", after " + std::to_string(attempt) + " attempts";
      // A refused key, an unknown model or endpoint, or no server at all fails every later request
      // alike; a timeout, an overloaded server or one odd reply may not.
      const bool fatal = response.unreachable || response.status == 401 || response.status == 403 ||
                         response.status == 404;
      throw LlmError(redact(line + ")"), fatal);
    }
    std::optional<double> retry_after;
    if (const auto it = response.headers.find("retry-after"); it != response.headers.end()) {
      retry_after = parse_retry_after(it->second);
    }
    sleep_(backoff_delay_s(attempt - 1, policy, jitter(), retry_after));
  }
}

}  // namespace kbench::agents
