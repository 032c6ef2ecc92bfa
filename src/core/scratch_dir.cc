#include "core/scratch_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace kbench {
namespace fs = std::filesystem;

namespace {

int open_directory(const fs::path& path) {
  return open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

}  // namespace

int remove_abandoned_scratch(const fs::path& root, const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    if (!entry.path().filename().string().starts_with(prefix + "-")) continue;
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    const int fd = open_directory(entry.path());
    if (fd < 0) continue;
    // Held by a live owner: LOCK_NB fails. Two collectors: one takes it, the other skips.
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::error_code ignored;
      if (fs::remove_all(entry.path(), ignored) > 0) ++removed;
    }
    close(fd);
  }
  return removed;
}

ScratchDir::ScratchDir(const fs::path& root, const std::string& prefix) {
  std::error_code ec;
  fs::create_directories(root, ec);
  remove_abandoned_scratch(root, prefix);
  // Made under a staging name the collector skips, locked, then renamed into view: a collector
  // never sees the directory unlocked.
  std::string staging = (root / ("." + prefix + "-XXXXXX")).string();
  if (mkdtemp(staging.data()) == nullptr)
    throw std::runtime_error("cannot create a directory under " + root.string() + ": " +
                             std::strerror(errno));
  lock_fd_ = open_directory(staging);
  if (lock_fd_ < 0 || flock(lock_fd_, LOCK_EX) != 0) {
    const std::string error = std::strerror(errno);
    if (lock_fd_ >= 0) close(lock_fd_);
    rmdir(staging.c_str());
    throw std::runtime_error("cannot lock " + staging + ": " + error);
  }
  const fs::path staged(staging);
  path_ = root / staged.filename().string().substr(1);
  // NOREPLACE: rename(2) would put the new directory in place of an empty one of that name.
  if (renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) != 0) {
    const std::string error = std::strerror(errno);
    close(lock_fd_);
    rmdir(staging.c_str());
    throw std::runtime_error("cannot create " + path_.string() + ": " + error);
  }
}

ScratchDir::~ScratchDir() {
  remove();
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept
    : path_(std::exchange(other.path_, {})), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

ScratchDir& ScratchDir::operator=(ScratchDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

void ScratchDir::remove() {
  if (!path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  if (lock_fd_ >= 0) close(lock_fd_);
  path_.clear();
  lock_fd_ = -1;
}

}  // namespace kbench
