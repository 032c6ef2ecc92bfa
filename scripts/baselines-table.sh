#!/usr/bin/env bash
# Regenerates docs/baselines-table.md, the measured table of docs/baselines.md: the XLA:CPU peer
# (scripts/xla-peer.sh --rounds 2 --json: XLA and kbench's baseline alternating on one core), then
# `kbench run --suite all --markdown --xla`, which times every baseline and writes the table. Run it on a quiet machine: both sides are timed
# on one core each, one after the other.
#
#   scripts/baselines-table.sh [--size cpu] [--kbench build/src/kbench] [--out FILE] [--no-xla]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
size=cpu
kbench="$root/build/src/kbench"
out="$root/docs/baselines-table.md"
xla=1
while (($#)); do
  case "$1" in
    --size) size="$2"; shift 2 ;;
    --kbench) kbench="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-xla) xla=0; shift ;;
    -h | --help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "baselines-table: error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d /tmp/kbench-baselines-table.XXXXXX)"
trap 'rm -rf "$work"' EXIT
xla_args=()
if ((xla)); then
  # Checks every JAX program, then times it and kbench's baseline in alternating rounds on one core
  # (the ratio column); a failing check fails the table.
  "$root/scripts/xla-peer.sh" --size "$size" --kbench "$kbench" --rounds 2 --iters 10 --warmup 2 \
    --json "$work/xla.json" >"$work/xla.md"
  xla_args=(--xla "$work/xla.json")
fi
"$kbench" run --suite all --size "$size" --markdown "${xla_args[@]}" >"$work/table.md"
mv "$work/table.md" "$out"
if ((xla)); then cp "$work/xla.md" "${out%.md}-xla.md"; fi
echo "baselines-table: wrote $out"
