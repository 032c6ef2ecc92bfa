// What the libFuzzer targets share: a failed property aborts with its reason (libFuzzer then saves
// the input), and an in-memory file for parsers that take a path.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace kbench::fuzz {

// A property of the parser that this input broke: an abort, which libFuzzer reports as a crash.
[[noreturn]] inline void fail(std::string_view why) {
  std::fprintf(stderr, "fuzz property failed: %.*s\n", static_cast<int>(why.size()), why.data());
  std::abort();
}

inline void require(bool ok, std::string_view why) {
  if (!ok) fail(why);
}

// Messages documented as one line must stay one line: they end up in verdicts and tables.
inline void require_one_line(std::string_view message, std::string_view what) {
  require(!message.empty() && message.find_first_of("\r\n") == std::string_view::npos,
          std::string(what) + " is not one non-empty line: " + std::string(message));
}

// An anonymous in-memory file (memfd) that holds the current input, reachable by a path, so
// parsers that read files read a real regular file without writing to disk.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("kbench-fuzz", 0)) {
    if (fd_ < 0) fail("memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }

  // Replaces the file's contents with `bytes`.
  void assign(const std::uint8_t* bytes, std::size_t size) {
    if (ftruncate(fd_, 0) != 0) fail("ftruncate failed");
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, bytes + done, size - done, static_cast<off_t>(done));
      if (n <= 0) fail("pwrite failed");
      done += static_cast<std::size_t>(n);
    }
  }

  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace kbench::fuzz
