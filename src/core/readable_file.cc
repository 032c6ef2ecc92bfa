#include "core/readable_file.h"

#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace kbench {

std::string why_not_readable_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status))
    return ec && ec != std::errc::no_such_file_or_directory ? ec.message() : "no such file";
  if (fs::is_directory(status)) return "it is a directory";
  if (!fs::is_regular_file(status)) return "it is not a regular file";
  if (::access(path.c_str(), R_OK) != 0)
    return std::error_code(errno, std::generic_category()).message();
  return {};
}

}  // namespace kbench
