# Writes OUTPUT, a header that holds each scaffold in SOURCES (a ;-list of .cpp files) as
# `inline constexpr std::string_view kbench::scaffolds::k<file stem>`, so `kbench scaffold` prints
# them from any directory while the files stay ordinary C++ that the compiler and clang-format see.
# Run as `cmake -DOUTPUT=... -DSOURCES=... -P embed.cmake`.
set(delimiter "kbench_scaffold")
set(header "// Generated from scaffolds/*.cpp by scaffolds/embed.cmake; edit those files.\n")
string(APPEND header "#pragma once\n\n#include <string_view>\n\nnamespace kbench::scaffolds {\n")
foreach(source IN LISTS SOURCES)
  get_filename_component(stem "${source}" NAME_WE)
  if(NOT stem MATCHES "^[0-9]+[pk]_[A-Za-z0-9_]+$")
    message(FATAL_ERROR "scaffold ${source}: the file name must be a workload name")
  endif()
  file(READ "${source}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "scaffold ${source} contains the raw-string delimiter )${delimiter}\"")
  endif()
  string(APPEND header "\ninline constexpr std::string_view k${stem} = R\"${delimiter}(${text})${delimiter}\";\n")
endforeach()
string(APPEND header "\n}  // namespace kbench::scaffolds\n")
# Only a changed header is rewritten, so a touched scaffold recompiles only what includes it.
file(WRITE "${OUTPUT}.new" "${header}")
configure_file("${OUTPUT}.new" "${OUTPUT}" COPYONLY)
file(REMOVE "${OUTPUT}.new")
