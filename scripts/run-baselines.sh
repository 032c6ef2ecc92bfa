#!/usr/bin/env bash
# The main job: install what is missing, build, then time every implemented workload's baseline at the
# default (cpu) size on one thread, each first checked against its reference. Extra arguments go to
# `kbench run` (e.g. --size smoke, --threads 2, --json).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --commands
exec build/src/kbench run "$@"
