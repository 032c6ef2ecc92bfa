// A private working directory that does not outlive its owner: removed when the ScratchDir is
// destroyed and, when a kill took its process first, by the next ScratchDir made under the same
// root with the same prefix.
//
// Liveness is an flock(2) the owner holds on the directory, not a process id in its name: the
// kernel drops the lock however the process ends, and it means the same in every PID namespace
// that shares the root (a pid does not: it is reused, and another namespace's pids are not ours).
#pragma once

#include <filesystem>
#include <string>

namespace kbench {

class ScratchDir {
 public:
  // Creates <root>/<prefix>-XXXXXX (root too, when missing), after removing the abandoned
  // directories of that prefix. Throws std::runtime_error naming the path when it cannot.
  ScratchDir(const std::filesystem::path& root, const std::string& prefix);
  ~ScratchDir();
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&& other) noexcept;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  void remove();

  std::filesystem::path path_;
  int lock_fd_ = -1;
};

// Removes every <root>/<prefix>-* directory whose owner is gone (its lock can be taken); returns
// how many. A directory being created is not yet under that name, so it is never taken for one.
int remove_abandoned_scratch(const std::filesystem::path& root, const std::string& prefix);

}  // namespace kbench
