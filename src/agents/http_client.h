// A small blocking HTTP POST over libcurl for the LLM providers: one request, one response, no
// retries (those are the provider's policy, src/agents/retry.h).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kbench::agents {

struct HttpResponse {
  int status = 0;                              // 0 when the transport failed (no response)
  std::string body;                            // as received
  std::map<std::string, std::string> headers;  // of the final response; names lower-cased
  std::string error;       // the transport's failure, one line; empty when a response came
  bool timed_out = false;  // the transport failure was the timeout
  // Nothing answers at the address (no such host, connection refused): no retry will change it.
  bool unreachable = false;
};

// A chat reply of the largest max_tokens is well under a megabyte; a server that sends more than
// this (a misconfigured proxy, a stream that never ends) is cut off rather than held in memory.
inline constexpr std::size_t kMaxResponseBytes = std::size_t{32} << 20;

// POSTs `body` to `url` with `headers` ("Name: value" lines) and waits at most `timeout_s` for the
// whole exchange. Never throws for network failures: they come back in `error`, as does a reply
// larger than `max_response_bytes`. Proxies, TLS verification and the rest follow libcurl's
// defaults (the environment's http_proxy included).
HttpResponse http_post(const std::string& url, const std::vector<std::string>& headers,
                       const std::string& body, double timeout_s,
                       std::size_t max_response_bytes = kMaxResponseBytes);

}  // namespace kbench::agents
