#!/usr/bin/env bash
# src/harness/git_commit.cmake, run as every build runs it, on a scratch repository: the stamp
# follows commits and edits (a stamp taken once at configure time did not), and an unchanged tree
# leaves the header untouched so that nothing recompiles.
#   git_commit_test.sh SOURCE_DIR
set -euo pipefail
script="$1/src/harness/git_commit.cmake"
command -v git >/dev/null || { echo "git_commit_test: no git: skipped"; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="$work/repo" header="$work/git_commit.h"
stamp() {
  cmake -DSOURCE_DIR="$1" -DOUTPUT="$header" -P "$script"
  sed -n 's/^#define KBENCH_GIT_COMMIT "\(.*\)"$/\1/p' "$header"
}
expect() {  # expect WHAT GOT WANT
  if [[ "$2" != "$3" ]]; then
    echo "git_commit_test: $1: stamped '$2', expected '$3'" >&2
    exit 1
  fi
}

mkdir -p "$repo"
git -C "$repo" init -q
git -C "$repo" config user.email test@kbench.invalid
git -C "$repo" config user.name test
echo one >"$repo/file.cc"
git -C "$repo" add file.cc
git -C "$repo" commit -qm one
first="$(git -C "$repo" rev-parse --short=12 HEAD)"
expect "a clean checkout" "$(stamp "$repo")" "$first"

written="$(stat -c %y "$header")"
sleep 0.05
expect "the same tree again" "$(stamp "$repo")" "$first"
expect "the header's time after an unchanged stamp" "$(stat -c %y "$header")" "$written"

echo two >"$repo/file.cc"
expect "an edit" "$(stamp "$repo")" "$first-dirty"

git -C "$repo" commit -qam two
second="$(git -C "$repo" rev-parse --short=12 HEAD)"
expect "a new commit" "$(stamp "$repo")" "$second"

mkdir -p "$work/plain"
expect "a tree outside any checkout" "$(stamp "$work/plain")" "unknown"
echo "git_commit_test: passed"
