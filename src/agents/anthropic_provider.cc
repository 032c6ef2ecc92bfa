// The Anthropic Messages API: POST {base}/v1/messages, the system prompt top-level, the reply's
// text in content blocks.
#include "agents/http_provider.h"

namespace kbench::agents {
namespace {

using json = nlohmann::json;

constexpr const char* kDefaultBaseUrl = "https://api.anthropic.com";
// The API version this body and reply shape follow; Anthropic keeps old versions served.
constexpr const char* kApiVersion = "2023-06-01";

class AnthropicProvider final : public HttpProvider {
 public:
  AnthropicProvider(const std::string& base_url, const ProviderOptions& options,
                    std::optional<std::string> api_key)
      : HttpProvider("anthropic", base_url, base_url + "/v1/messages", options,
                     std::move(api_key)) {}

 private:
  json request_body(const ChatRequest& request) const override {
    json messages = json::array();
    append_chat_messages(messages, request.messages);
    json body = {{"model", model()},
                 {"max_tokens", request.max_tokens},
                 {"messages", std::move(messages)},
                 {"temperature", request.temperature}};
    if (!request.system.empty()) body["system"] = request.system;
    return body;
  }

  std::vector<std::string> auth_headers(const std::optional<std::string>& api_key) const override {
    std::vector<std::string> headers = {std::string("anthropic-version: ") + kApiVersion};
    if (api_key) headers.push_back("x-api-key: " + *api_key);
    return headers;
  }

  ChatReply parse_reply(const json& body) const override {
    ChatReply reply;
    // Text blocks joined in order; other block kinds (thinking, tool_use) are not the answer.
    for (const json& block : body.at("content")) {
      if (block.value("type", "") == "text") reply.text += block.at("text").get<std::string>();
    }
    read_finish_reason(body, "stop_reason", reply);
    read_token_usage(body, "input_tokens", "output_tokens", reply);
    reply.model = reply_model(body);
    return reply;
  }
};

}  // namespace

std::unique_ptr<LlmProvider> make_anthropic_provider(const ProviderOptions& options,
                                                     std::optional<std::string> api_key) {
  return std::make_unique<AnthropicProvider>(base_url_or(options, kDefaultBaseUrl), options,
                                             std::move(api_key));
}

}  // namespace kbench::agents
