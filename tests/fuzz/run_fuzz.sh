#!/usr/bin/env bash
# Runs one libFuzzer target for a few seconds on a copy of its seed corpus, so the repository is
# never written; a crash's reproducer is kept in FINDINGS_DIR.
# Usage: run_fuzz.sh TARGET CORPUS_DIR SECONDS FINDINGS_DIR [DICT]
set -euo pipefail
target="$(realpath "$1")" corpus=$2 seconds=$3 findings="$(realpath -m "$4")" dict=${5:+$(realpath "$5")}
work="$(mktemp -d "${TMPDIR:-/tmp}/kbench-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$findings"
cp -r "$corpus"/. "$work/corpus/"
args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
      -artifact_prefix="$findings/$(basename "$target")-")
[[ -n "$dict" ]] && args+=(-dict="$dict")
# The corpus first in the run's own directory: what the run adds to it is thrown away with it.
cd "$work"
"$target" "${args[@]}" "$work/corpus"
