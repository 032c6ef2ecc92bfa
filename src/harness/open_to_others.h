// Whether a user of no account can read a file: what a build that kbench, as root, runs under a
// user of its own needs of every tree it reads (harness/confined_command.h).
#pragma once

#include <filesystem>
#include <string>

namespace kbench {

// The first path that stops a user who neither owns `path` nor shares its group from reading it:
// a directory above it that others cannot search, or `path` itself not readable by others (a
// directory: readable and searchable; an executable: executable too), or, with `whole_tree`,
// anything beneath a directory `path`. "" when nothing does, and for a path that does not exist
// (nothing there to read). Symbolic links are followed, to where the build would read.
std::string first_path_closed_to_others(const std::filesystem::path& path, bool whole_tree);

}  // namespace kbench
