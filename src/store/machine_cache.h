// Facts about this machine that commands measure once and reuse: its peaks, the fastest library
// path per GEMM or convolution shape, the library calls a baseline makes. They are not results:
// every database on the machine shares them, so a new database (each test has one) does not measure
// the machine again, and a command reading a database never has to write to it.
//
// One file per key in the machine/ directory of kbench's cache (kbench_cache_dir(): $KBENCH_CACHE,
// else $XDG_CACHE_HOME/kbench, else ~/.cache/kbench), named by the key's hash, holding the key, the
// value and when it was measured.
// Files are replaced by rename, so a reader sees a whole entry or none. A process about to measure
// a fact holds it (hold()): others that need it wait, then read what it stored, so two
// measurements of the machine never run at once and halve each other's figures.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace kbench {

struct CachedFact {
  std::string value;
  std::string measured_at;  // UTC, ISO-8601
};

class MachineCache {
 public:
  explicit MachineCache(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // The directory the environment names ($KBENCH_CACHE_DIR, $XDG_CACHE_HOME/kbench,
  // ~/.cache/kbench).
  static MachineCache from_environment();

  // The entry for `key`; nullopt when there is none or it is unreadable (it is measured again).
  std::optional<CachedFact> get(const std::string& key) const;
  // Stores `value` under `key`, measured now. A directory that cannot be written loses only the
  // reuse: the caller has its value. Returns false then, with the reason in `why` when given.
  bool put(const std::string& key, const std::string& value, std::string* why = nullptr);

  // An exclusive hold on `key` among processes (flock on a lock file beside its entry), released
  // when destroyed. Without a writable directory it holds nothing: measuring then cannot be shared
  // either.
  class Hold {
   public:
    explicit Hold(int fd = -1) : fd_(fd) {}
    Hold(Hold&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Hold& operator=(Hold&&) = delete;
    ~Hold();

   private:
    int fd_;
  };
  // Waits while another process holds `key`; `on_wait` runs once first when it has to. The lock
  // file is close-on-exec: a child that execs (a worker, a compiler) never shares the hold.
  Hold hold(const std::string& key, const std::function<void()>& on_wait = {}) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path file_of(const std::string& key) const;

  std::filesystem::path dir_;
};

}  // namespace kbench
