// make_provider(): the provider named by the options, with its key taken from the environment at
// construction (held in memory only; never logged, stored or passed on).
#include "agents/http_provider.h"

#include <cstdlib>
#include <stdexcept>

namespace kbench::agents {

std::unique_ptr<LlmProvider> make_provider(const ProviderOptions& options) {
  if (options.provider != "openai" && options.provider != "anthropic") {
    throw std::invalid_argument("unknown provider '" + options.provider +
                                "' (expected openai or anthropic)");
  }
  if (options.model.empty()) throw std::invalid_argument("a model name is required");
  const bool openai = options.provider == "openai";
  const std::string env = !options.api_key_env.empty()
                              ? options.api_key_env
                              : (openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
  std::optional<std::string> key;
  // An unset or empty variable means no key: local servers (llama.cpp, vLLM) take none.
  if (const char* value = std::getenv(env.c_str()); value != nullptr && *value != '\0') {
    key = value;
  }
  return openai ? make_openai_provider(options, std::move(key))
                : make_anthropic_provider(options, std::move(key));
}

}  // namespace kbench::agents
