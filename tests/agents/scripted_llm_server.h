// A real HTTP/1.1 server on 127.0.0.1 for the agents' tests: it answers each request with what the
// test's script chooses (canned replies, 429s, slow replies) and records every request it received.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kbench::agents::testing {

struct RecordedRequest {
  std::string method;                          // "POST"
  std::string path;                            // "/v1/chat/completions"
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

struct ScriptedResponse {
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;  // e.g. {"retry-after", "0"}
  double delay_s = 0;  // before the response is sent (a timeout test's slow server)
};

class ScriptedLlmServer {
 public:
  // Called once per request, in arrival order, on the server's thread; `index` counts requests from
  // 0. Requests are served one connection at a time, each connection closed after its response.
  using Script = std::function<ScriptedResponse(const RecordedRequest& request, int index)>;
  explicit ScriptedLlmServer(Script script);
  ~ScriptedLlmServer();  // stops the thread, closing the listening socket
  ScriptedLlmServer(const ScriptedLlmServer&) = delete;
  ScriptedLlmServer& operator=(const ScriptedLlmServer&) = delete;

  int port() const;
  std::string url() const;  // "http://127.0.0.1:PORT"
  std::vector<RecordedRequest> requests() const;

  // Bodies in each API's response format.
  static std::string openai_body(const std::string& text, int prompt_tokens = 10,
                                 int completion_tokens = 20);
  static std::string anthropic_body(const std::string& text, int input_tokens = 10,
                                    int output_tokens = 20);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kbench::agents::testing
