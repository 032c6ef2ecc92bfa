// Text from untrusted sources (a candidate's output, a compiler quoting a binary "source") made
// safe to show on a terminal.
#pragma once

#include <string>
#include <string_view>

namespace kbench {

// `text` as it may go to a terminal: control characters other than tab and bytes that are not
// valid UTF-8 become \xNN, so a candidate's output (a compiler quoting a binary "source", a log
// with escape sequences) can neither garble nor drive the user's terminal. Newlines are escaped
// too: callers print line by line.
std::string terminal_safe(std::string_view text);

}  // namespace kbench
