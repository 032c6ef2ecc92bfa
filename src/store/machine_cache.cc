#include "store/machine_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/environment.h"
#include "core/sha256.h"

namespace kbench {

MachineCache MachineCache::from_environment() {
  return MachineCache(std::filesystem::path(kbench_cache_dir()) / "machine");
}

std::filesystem::path MachineCache::file_of(const std::string& key) const {
  return dir_ / (sha256_hex(key).substr(0, 32) + ".json");
}

std::optional<CachedFact> MachineCache::get(const std::string& key) const {
  std::ifstream in(file_of(key));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    const nlohmann::json entry = nlohmann::json::parse(text.str());
    // A hash collision or a hand-edited file must not answer for another key.
    if (entry.at("key").get<std::string>() != key) return std::nullopt;
    return CachedFact{entry.at("value").get<std::string>(),
                      entry.at("measured_at").get<std::string>()};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool MachineCache::put(const std::string& key, const std::string& value, std::string* why) {
  const auto fail = [&](const std::string& reason) {
    if (why) *why = "cannot write the machine cache in '" + dir_.string() + "': " + reason;
    return false;
  };
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return fail(ec.message());
  const std::filesystem::path file = file_of(key);
  static std::atomic<unsigned> writes{0};
  const std::filesystem::path temporary =
      file.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << nlohmann::json{{"key", key}, {"value", value}, {"measured_at", utc_now_iso8601()}}
               .dump();
    out.close();
    if (!out) {
      std::filesystem::remove(temporary, ec);
      return fail("writing failed");
    }
  }
  std::filesystem::rename(temporary, file, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    return fail(ec.message());
  }
  return true;
}

MachineCache::Hold::~Hold() {
  if (fd_ >= 0) close(fd_);  // closing releases the flock
}

MachineCache::Hold MachineCache::hold(const std::string& key,
                                      const std::function<void()>& on_wait) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  std::filesystem::path lock = file_of(key);
  lock.replace_extension(".lock");
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Hold();
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (on_wait) on_wait();
    while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  return Hold(fd);
}

}  // namespace kbench
