#!/usr/bin/env bash
# CTest `xla_peer`: the independent cross-check of kbench's oracle by JAX programs
# (scripts/xla-peer.sh at smoke size, every workload with a JAX program), when jax is installed.
# Installs nothing: without jax it prints why it skipped and exits 77 (the test's SKIP_RETURN_CODE).
#
#   tests/xla_peer_test.sh SOURCE_DIR KBENCH_EXE
set -euo pipefail
source_dir="$1"
kbench="$2"
skip_code=77

source "$source_dir/tests/jax_python.sh" "$source_dir"
if [[ -z "$py" ]]; then
  echo "skipped: jax not installed (run scripts/xla-peer.sh)"
  exit "$skip_code"
fi

# Records go to a scratch database, never the user's store (scripts/test.sh sets KBENCH_DB already).
scratch="$(mktemp -d "${TMPDIR:-/tmp}/kbench-xla-peer-test.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
db="${KBENCH_DB:-$scratch/results.db}"

# A fresh seed per run (kbench export draws one); a failure names it in its one-line error.
# Few timed calls: at smoke size the timing only exercises the code path, the check is the point.
"$source_dir/scripts/xla-peer.sh" --size smoke --kbench "$kbench" --python "$py" --no-install \
  --db "$db" --warmup 1 --iters 3 --workdir "$scratch/exports"
