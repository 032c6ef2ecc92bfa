// OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, Ollama, Gemini's
// compatibility endpoint): POST {base}/chat/completions.
#include "agents/http_provider.h"

namespace kbench::agents {
namespace {

using json = nlohmann::json;

constexpr const char* kDefaultBaseUrl = "https://api.openai.com/v1";

class OpenAiProvider final : public HttpProvider {
 public:
  OpenAiProvider(const std::string& base_url, const ProviderOptions& options,
                 std::optional<std::string> api_key)
      : HttpProvider("openai", base_url, base_url + "/chat/completions", options,
                     std::move(api_key)) {}

 private:
  json request_body(const ChatRequest& request) const override {
    json messages = json::array();
    if (!request.system.empty()) {
      messages.push_back({{"role", "system"}, {"content", request.system}});
    }
    append_chat_messages(messages, request.messages);
    json body = {{"model", model()},
                 {"messages", std::move(messages)},
                 {"max_tokens", request.max_tokens},
                 {"temperature", request.temperature}};
    if (request.seed) body["seed"] = *request.seed;
    return body;
  }

  std::vector<std::string> auth_headers(const std::optional<std::string>& api_key) const override {
    if (!api_key) return {};
    return {"Authorization: Bearer " + *api_key};
  }

  ChatReply parse_reply(const json& body) const override {
    const json& choice = body.at("choices").at(0);
    ChatReply reply;
    const json& content = choice.at("message").at("content");
    // null content (a refusal, a tool call) is an empty reply, which the method records as a
    // sample without code rather than a failed request.
    if (!content.is_null()) reply.text = content.get<std::string>();
    read_finish_reason(choice, "finish_reason", reply);
    read_token_usage(body, "prompt_tokens", "completion_tokens", reply);
    reply.model = reply_model(body);
    return reply;
  }
};

}  // namespace

std::unique_ptr<LlmProvider> make_openai_provider(const ProviderOptions& options,
                                                  std::optional<std::string> api_key) {
  return std::make_unique<OpenAiProvider>(base_url_or(options, kDefaultBaseUrl), options,
                                          std::move(api_key));
}

}  // namespace kbench::agents
