#!/usr/bin/env bash
# Configures and builds kbench into build/ (Release, -march=native): every target, or with --commands
# (first) only the executables the commands run, kbench and kbench-worker, which is what
# scripts/run-baselines.sh needs: 5 minutes on 2 cores instead of 8.5 with the tests. Other
# arguments go to CMake.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
if [[ ${1:-} == --commands ]]; then
  targets=(--target kbench kbench-worker)
  shift
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)" "${targets[@]}"
