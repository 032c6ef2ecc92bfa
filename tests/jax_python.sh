# Sourced by the CTest scripts that need jax (xla_peer_test.sh, originals_test.sh): sets `py` to the
# interpreter scripts/xla-peer.sh would use (KBENCH_XLA_PYTHON, else the project venv, else python3)
# where it imports jax and numpy; leaves it empty where none does. Installs nothing.
#
#   source tests/jax_python.sh SOURCE_DIR
py=""
for candidate in "${KBENCH_XLA_PYTHON:-}" "${KBENCH_XLA_VENV:-$1/.venv-xla}/bin/python" python3; do
  [[ -n "$candidate" ]] || continue
  if "$candidate" -c 'import jax, numpy' >/dev/null 2>&1; then
    py="$candidate"
    break
  fi
done
