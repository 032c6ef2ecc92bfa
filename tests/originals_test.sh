#!/usr/bin/env bash
# CTest `originals`: kbench_jax.original runs programs laid out as JAXBench's, unmodified, on kbench
# exports (tests/originals_test.py), and with KBENCH_ORIGINALS set JAXBench's own programs too.
# Installs nothing: without jax it prints why it skipped and exits 77 (the test's SKIP_RETURN_CODE).
#
#   tests/originals_test.sh SOURCE_DIR KBENCH_EXE
set -euo pipefail
source_dir="$1"
skip_code=77

source "$source_dir/tests/jax_python.sh" "$source_dir"
if [[ -z "$py" ]]; then
  echo "skipped: jax not installed (run scripts/xla-peer.sh)"
  exit "$skip_code"
fi
KBENCH="$2" exec "$py" "$source_dir/tests/originals_test.py"
