#include "core/cpu_caches.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/environment.h"
#include "core/text.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;

std::string sysfs_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

CpuCaches read_cpu_caches() {
  CpuCaches caches;
  std::error_code ec;
  for (const fs::directory_entry& entry :
       fs::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
    const fs::path& dir = entry.path();
    if (!dir.filename().string().starts_with("index")) continue;
    const std::string level = sysfs_line(dir / "level"), type = sysfs_line(dir / "type");
    const long size = parse_cache_size(sysfs_line(dir / "size"));
    if (level == "1" && type == "Data") caches.l1d_bytes = size;
    if (level == "2" && type != "Instruction") caches.l2_bytes = size;
    if (level == "3" && type != "Instruction") {
      caches.l3_bytes = size;
      caches.l3_shared_by = count_cpu_list(sysfs_line(dir / "shared_cpu_list"));
    }
  }
  if (caches.l1d_bytes == 0) caches.l1d_bytes = std::max(0L, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  if (caches.l2_bytes == 0) caches.l2_bytes = std::max(0L, sysconf(_SC_LEVEL2_CACHE_SIZE));
  if (caches.l3_bytes == 0) caches.l3_bytes = std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE));
  return caches;
}

}  // namespace

std::string CpuCaches::sizes() const {
  const auto kib = [](long bytes) { return std::to_string(bytes / 1024) + "K"; };
  return "L1d " + kib(l1d_bytes) + " L2 " + kib(l2_bytes) + " L3 " + kib(l3_bytes);
}

const CpuCaches& cpu_caches() {
  static const CpuCaches caches = read_cpu_caches();
  return caches;
}

long parse_cache_size(const std::string& text) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  if (*end == 'K') return value * 1024;
  if (*end == 'M') return value * 1024 * 1024;
  return value;
}

}  // namespace kbench
