// The per-run request log: one JSON line per HTTP attempt to an LLM, appended and flushed as it
// happens, so a crashed or interrupted run still shows what was asked and answered.
#pragma once

#include <nlohmann/json.hpp>

#include <mutex>
#include <string>

namespace kbench::agents {

class RequestLog {
 public:
  // Opens (creating) `path` for appending; throws std::runtime_error when it cannot.
  explicit RequestLog(const std::string& path);
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Thread-safe. Writes `entry` as one line with a single write(2) on an O_APPEND descriptor, so
  // lines from several providers sharing the file do not interleave. Invalid UTF-8 in replies is
  // replaced rather than thrown over. A failed write is ignored: the log must not fail a run.
  void append(const nlohmann::json& entry);

 private:
  std::mutex mutex_;
  int fd_ = -1;
};

// "2026-12-01T16:23:10.123Z": the log's timestamps, UTC.
std::string iso8601_now();

// `text` cut to at most `max_bytes`, never inside a UTF-8 sequence.
std::string truncate_utf8(const std::string& text, std::size_t max_bytes);

}  // namespace kbench::agents
