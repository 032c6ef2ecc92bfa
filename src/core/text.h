// Small string helpers shared by the layers that read text files and command output.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kbench {

// `s` without leading and trailing spaces, tabs, carriage returns and newlines: what a line of
// /proc, a tool's output or a hand-edited file means, whatever its line endings.
std::string trim(std::string_view s);

// The lines of `text`, without their newlines; a newline at the end starts no further line
// ("a\nb\n" is "a", "b"; "a\n\nb" is "a", "", "b"). Views into `text`.
std::vector<std::string_view> split_lines(std::string_view text);

}  // namespace kbench
