#!/usr/bin/env bash
# The libFuzzer targets of the parsers of outside input (tests/fuzz, docs/fuzzing.md): Clang builds
# only them, from the parsers' own sources, into build-fuzz/, and each runs for SECONDS (default 20)
# on a copy of its seed corpus. scripts/test.sh ends with it; scripts/check-fresh-install.sh runs it
# for a few seconds to prove that the project's scripts install Clang with libFuzzer.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS] (a whole number of seconds, at least 1)" >&2; exit 2; }
jobs="$(nproc)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_FUZZ=ON \
  -DKBENCH_BUILD_TESTS=OFF -DKBENCH_WERROR=ON -DKBENCH_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build build-fuzz -j"$jobs" --target kbench_fuzz
(cd build-fuzz && ctest --output-on-failure -j"$jobs" -L fuzz)
