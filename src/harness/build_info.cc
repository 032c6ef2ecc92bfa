// Build facts compiled in by CMake.
#include "harness/build_info.h"

#include "core/environment.h"
#include "git_commit.h"  // generated at every build (harness/git_commit.cmake)

namespace kbench {

const char* kbench_commit() {
  return KBENCH_GIT_COMMIT;
}
const char* kbench_build_type() {
  return KBENCH_BUILD_TYPE;
}

void register_build_info() {
  set_kbench_build_info(kbench_commit(), kbench_build_type());
}

}  // namespace kbench
