// Small string helpers shared by the layers that read text files and command output.
#pragma once

#include <string>
#include <string_view>

namespace kbench {

// `s` without leading and trailing spaces, tabs, carriage returns and newlines: what a line of
// /proc, a tool's output or a hand-edited file means, whatever its line endings.
std::string trim(std::string_view s);

}  // namespace kbench
