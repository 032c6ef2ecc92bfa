#include "ops/onednn_implementations.h"

#include <algorithm>
#include <mutex>

namespace kbench::ops {
namespace {

struct Created {
  std::mutex mutex;
  std::vector<std::string> names;
};

Created& created() {
  static Created c;
  return c;
}

}  // namespace

std::vector<std::string> onednn_implementations_created() {
  Created& c = created();
  std::lock_guard lock(c.mutex);
  return c.names;
}

namespace detail {

void note_onednn_implementation(std::string_view impl_info) {
  Created& c = created();
  std::lock_guard lock(c.mutex);
  if (std::find(c.names.begin(), c.names.end(), impl_info) == c.names.end())
    c.names.emplace_back(impl_info);
}

}  // namespace detail
}  // namespace kbench::ops
