// Why a path the user named cannot be read as a file, in words a one-line error can carry.
#pragma once

#include <filesystem>
#include <string>

namespace kbench {

// Empty when `path` is a regular file this process may read; otherwise what it is instead: "no
// such file", "it is a directory", "it is not a regular file" (a device, a FIFO, a socket), or
// the error that stopped the check ("Permission denied"). Links are followed. Every command that
// reads a named file says the same thing about the same path.
std::string why_not_readable_file(const std::filesystem::path& path);

}  // namespace kbench
