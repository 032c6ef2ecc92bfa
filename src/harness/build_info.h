// Facts fixed when kbench was built (git commit, build flavour), recorded with every result.
#pragma once

namespace kbench {

const char* kbench_commit();
const char* kbench_build_type();
// Hands both to current_environment(); call once at startup.
void register_build_info();

}  // namespace kbench
