// The scripted loopback LLM server (tests/agents/scripted_llm_server.h): one thread, one
// connection at a time, and a stop pipe it polls beside every socket so that the destructor never
// waits on a client or a scripted delay.
#include "agents/scripted_llm_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace kbench::agents::testing {
namespace {

// A client that connected but never finishes its request is given up on after this long, so a
// broken test fails on its own assertion instead of stalling the server for the next request.
constexpr int kReadTimeoutMs = 10000;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 529:
      return "Overloaded";
    default:
      return "Status";
  }
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

struct ScriptedLlmServer::State {
  Script script;
  int listen_fd = -1;
  int stop_read = -1;
  int stop_write = -1;
  int port = 0;
  mutable std::mutex mutex;
  std::vector<RecordedRequest> requests;
  std::thread thread;

  // Waits until `fd` has `events` or the stop pipe is readable: true for the former, false when
  // stopping or after `timeout_ms` (-1: no limit).
  bool wait_for(int fd, short events, int timeout_ms) const {
    pollfd fds[2] = {{stop_read, POLLIN, 0}, {fd, events, 0}};
    const int count = fd >= 0 ? 2 : 1;
    while (true) {
      const int n = ::poll(fds, count, timeout_ms);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      if (fds[0].revents != 0) return false;
      return count == 2 && fds[1].revents != 0;
    }
  }

  bool stopping() const {
    pollfd fd = {stop_read, POLLIN, 0};
    return ::poll(&fd, 1, 0) > 0;
  }

  bool send_all(int fd, const std::string& data) const {
    std::size_t done = 0;
    while (done < data.size()) {
      if (!wait_for(fd, POLLOUT, kReadTimeoutMs)) return false;
      const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return false;  // the client gave up (its timeout): nothing to answer
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Reads more of the request into `buffer`; false at EOF, error, timeout or stop.
  bool read_more(int fd, std::string& buffer) const {
    if (!wait_for(fd, POLLIN, kReadTimeoutMs)) return false;
    char chunk[16384];
    while (true) {
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
  }

  // Parses one request from `fd`; nullopt when the client went away first.
  std::optional<RecordedRequest> read_request(int fd) const {
    std::string buffer;
    std::size_t head_end;
    while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more(fd, buffer)) return std::nullopt;
    }
    RecordedRequest request;
    std::size_t line_end = buffer.find("\r\n");
    const std::string request_line = buffer.substr(0, line_end);
    const auto space1 = request_line.find(' ');
    const auto space2 = request_line.find(' ', space1 + 1);
    if (space1 == std::string::npos || space2 == std::string::npos) return std::nullopt;
    request.method = request_line.substr(0, space1);
    request.path = request_line.substr(space1 + 1, space2 - space1 - 1);
    for (std::size_t pos = line_end + 2; pos < head_end;) {
      const std::size_t end = buffer.find("\r\n", pos);
      const std::string line = buffer.substr(pos, end - pos);
      pos = end + 2;
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string name = lower(trim(line.substr(0, colon)));
      const std::string value = trim(line.substr(colon + 1));
      auto [it, inserted] = request.headers.emplace(name, value);
      if (!inserted) it->second += ", " + value;
    }
    std::size_t length = 0;
    if (const auto it = request.headers.find("content-length"); it != request.headers.end()) {
      length = std::stoul(it->second);
    }
    request.body = buffer.substr(head_end + 4);
    if (const auto it = request.headers.find("expect"); it != request.headers.end() &&
                                                        lower(it->second) == "100-continue" &&
                                                        request.body.size() < length) {
      if (!send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return std::nullopt;
    }
    while (request.body.size() < length) {
      if (!read_more(fd, request.body)) return std::nullopt;
    }
    request.body.resize(length);
    return request;
  }

  void serve_connection(int fd) {
    const auto request = read_request(fd);
    if (!request) return;
    int index;
    {
      std::lock_guard<std::mutex> lock(mutex);
      index = static_cast<int>(requests.size());
      requests.push_back(*request);
    }
    ScriptedResponse response;
    try {
      response = script(*request, index);
    } catch (const std::exception& e) {
      // A throwing script must not kill the server thread (std::terminate): the test sees a 500.
      response = {500, nlohmann::json{{"error", {{"message", e.what()}}}}.dump(), {}, 0};
    }
    if (response.delay_s > 0) {
      const int delay_ms = static_cast<int>(response.delay_s * 1000);
      if (wait_for(-1, 0, delay_ms) || stopping()) return;
    }
    std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                      reason_phrase(response.status) + "\r\n";
    out += "Content-Type: application/json\r\n";
    out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
    out += "Connection: close\r\n";
    for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
    out += "\r\n" + response.body;
    send_all(fd, out);
  }

  void run() {
    while (wait_for(listen_fd, POLLIN, -1)) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) continue;
      try {
        serve_connection(fd);
      } catch (const std::exception&) {
        // A malformed request (a bad Content-Length) drops its connection, not the server.
      }
      // Half-close first so the client reads the whole response before the socket goes away.
      ::shutdown(fd, SHUT_WR);
      close_fd(fd);
    }
  }
};

ScriptedLlmServer::ScriptedLlmServer(Script script) : state_(std::make_unique<State>()) {
  state_->script = std::move(script);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  state_->stop_read = pipe_fds[0];
  state_->stop_write = pipe_fds[1];
  state_->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;  // the kernel picks a free port: tests run in parallel
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (state_->listen_fd < 0 ||
      ::bind(state_->listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(state_->listen_fd, 64) != 0 ||
      ::getsockname(state_->listen_fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    const std::string reason = std::strerror(errno);
    close_fd(state_->listen_fd);
    close_fd(state_->stop_read);
    close_fd(state_->stop_write);
    throw std::runtime_error("scripted LLM server: cannot listen on 127.0.0.1: " + reason);
  }
  state_->port = ntohs(address.sin_port);
  state_->thread = std::thread([state = state_.get()] { state->run(); });
}

ScriptedLlmServer::~ScriptedLlmServer() {
  const char byte = 's';
  while (::write(state_->stop_write, &byte, 1) < 0 && errno == EINTR) {
  }
  state_->thread.join();
  close_fd(state_->listen_fd);
  close_fd(state_->stop_read);
  close_fd(state_->stop_write);
}

int ScriptedLlmServer::port() const {
  return state_->port;
}

std::string ScriptedLlmServer::url() const {
  return "http://127.0.0.1:" + std::to_string(state_->port);
}

std::vector<RecordedRequest> ScriptedLlmServer::requests() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->requests;
}

std::string ScriptedLlmServer::openai_body(const std::string& text, int prompt_tokens,
                                           int completion_tokens) {
  const nlohmann::json body = {{"id", "chatcmpl-scripted"},
                               {"object", "chat.completion"},
                               {"model", "scripted-model"},
                               {"choices",
                                {{{"index", 0},
                                  {"message", {{"role", "assistant"}, {"content", text}}},
                                  {"finish_reason", "stop"}}}},
                               {"usage",
                                {{"prompt_tokens", prompt_tokens},
                                 {"completion_tokens", completion_tokens},
                                 {"total_tokens", prompt_tokens + completion_tokens}}}};
  return body.dump();
}

std::string ScriptedLlmServer::anthropic_body(const std::string& text, int input_tokens,
                                              int output_tokens) {
  const nlohmann::json body = {
      {"id", "msg_scripted"},
      {"type", "message"},
      {"role", "assistant"},
      {"model", "scripted-model"},
      {"content", {{{"type", "text"}, {"text", text}}}},
      {"stop_reason", "end_turn"},
      {"usage", {{"input_tokens", input_tokens}, {"output_tokens", output_tokens}}}};
  return body.dump();
}

}  // namespace kbench::agents::testing
