// Text from untrusted sources (a candidate's output, a compiler quoting a binary "source") made
// safe to show on a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kbench {

// `text` as it may go to a terminal: control characters other than tab and bytes that are not
// valid UTF-8 become \xNN, so a candidate's output (a compiler quoting a binary "source", a log
// with escape sequences) can neither garble nor drive the user's terminal. Newlines are escaped
// too: callers print line by line.
std::string terminal_safe(std::string_view text);

// `line` cut to at most `max_bytes` bytes (never inside a UTF-8 sequence), with what was cut said
// at the end: a compiler quoting a binary "source" or a minified line writes lines of tens of
// kilobytes, one of which would fill the screen (or a model's prompt) and hide every other error.
// `unread_bytes` counts bytes of the line after `line` that the caller never read.
std::string clip_line(std::string_view line, std::size_t max_bytes, std::size_t unread_bytes = 0);

}  // namespace kbench
