// libcurl behind http_post(): one easy handle per request (handles are cheap next to an LLM's
// seconds of latency, and a fresh one per call keeps concurrent callers apart).
#include "agents/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace kbench::agents {
namespace {

// curl_global_init is not thread-safe and must run before any handle exists; the providers may be
// first used from several threads at once.
void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw std::runtime_error("curl_global_init failed");
    }
  });
}

// The body as it arrives, up to its cap: a reply larger than that ends the transfer (libcurl
// takes a short count as a write error) instead of growing without bound.
struct BodySink {
  std::string* body;
  std::size_t max_bytes;
  bool overflowed = false;
};

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  if (sink->body->size() + size * count > sink->max_bytes) {
    sink->overflowed = true;
    return 0;
  }
  sink->body->append(data, size * count);
  return size * count;
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// Called once per header line, status lines included: an interim response (100 Continue) or a
// redirect starts a new block, and only the final block's headers describe the body.
std::size_t collect_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& headers = *static_cast<std::map<std::string, std::string>*>(user);
  std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    headers.clear();
    return size * count;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return size * count;
  std::string name = trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string value = trim(line.substr(colon + 1));
  auto [it, inserted] = headers.emplace(name, value);
  if (!inserted) it->second += ", " + value;
  return size * count;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

HttpResponse http_post(const std::string& url, const std::vector<std::string>& headers,
                       const std::string& body, double timeout_s, std::size_t max_response_bytes) {
  init_curl_once();
  HttpResponse response;
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    response.error = "curl_easy_init failed";
    return response;
  }
  std::unique_ptr<curl_slist, SlistDeleter> list;
  for (const auto& header : headers) {
    curl_slist* grown = curl_slist_append(list.get(), header.c_str());
    if (grown == nullptr) {
      response.error = "curl_slist_append failed";
      return response;
    }
    list.release();
    list.reset(grown);
  }
  char error_buffer[CURL_ERROR_SIZE] = {};
  const long timeout_ms = std::max(1L, std::lround(timeout_s * 1000));
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list.get());
  // Timeouts must not use SIGALRM: the providers run on many threads.
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
  BodySink sink{&response.body, max_response_bytes};
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response.headers);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  const CURLcode code = curl_easy_perform(h);
  if (code != CURLE_OK) {
    response.timed_out = code == CURLE_OPERATION_TIMEDOUT;
    response.unreachable = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
                           code == CURLE_COULDNT_RESOLVE_PROXY ||
                           code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_URL_MALFORMAT;
    response.error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    if (sink.overflowed)
      response.error = "the reply was larger than " + std::to_string(max_response_bytes) +
                       " bytes; the rest was not read";
    if (response.timed_out) {
      response.error =
          "timeout after " + std::to_string(timeout_ms) + " ms (" + response.error + ")";
    }
    response.status = 0;
    response.headers.clear();
    response.body.clear();
    return response;
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  return response;
}

}  // namespace kbench::agents
