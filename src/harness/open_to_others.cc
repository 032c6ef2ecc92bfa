#include "harness/open_to_others.h"

#include <sys/stat.h>

#include <system_error>

namespace kbench {
namespace fs = std::filesystem;

namespace {

bool open_to_others(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return (st.st_mode & S_IROTH) && (st.st_mode & S_IXOTH);
  return (st.st_mode & S_IROTH) && (!(st.st_mode & S_IXUSR) || (st.st_mode & S_IXOTH));
}

// The first directory above `path` (itself excluded) that others cannot search, or "".
std::string first_closed_ancestor(const fs::path& path) {
  for (fs::path dir = path.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || !(st.st_mode & S_IXOTH)) return dir.string();
    if (dir == dir.root_path()) break;
  }
  return "";
}

}  // namespace

std::string first_path_closed_to_others(const fs::path& path, bool whole_tree) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  if (ec) return "";
  // A walk through a link searches the directories above the link and above its target.
  for (const fs::path& walked : {path.lexically_normal(), real})
    if (std::string closed = first_closed_ancestor(walked); !closed.empty()) return closed;
  struct stat st {};
  if (stat(real.c_str(), &st) != 0 || !open_to_others(st)) return real.string();
  if (!whole_tree || !S_ISDIR(st.st_mode)) return "";
  for (fs::recursive_directory_iterator it(real, ec), end; !ec && it != end; it.increment(ec)) {
    if (lstat(it->path().c_str(), &st) != 0) return it->path().string();
    if (S_ISLNK(st.st_mode)) {  // what the build reads through it is its target
      if (std::string closed = first_path_closed_to_others(it->path(), false); !closed.empty())
        return closed;
    } else if (!open_to_others(st)) {
      return it->path().string();
    }
  }
  return ec ? real.string() : "";
}

}  // namespace kbench
