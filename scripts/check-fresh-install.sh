#!/usr/bin/env bash
# Proves the README's first command on a fresh Debian 12: in a chroot of a minimal debootstrap root
# (cached, always used from a pristine copy) it runs scripts/run-baselines.sh from a clean clone of one
# commit, then `kbench eval` of an example and of a oneMKL candidate, `kbench analyze` of an example,
# the XLA:CPU peer (which installs jax), the tests that need an outside tool (CTest label "tools";
# none may skip) and a short fuzz stage (scripts/fuzz.sh 2), and with --all the local LLM's install.
#
#   scripts/check-fresh-install.sh [--commit REV] [--all] [--refresh-root] [--keep]
#
#   --commit REV     the commit to check (default HEAD); only committed files take part
#   --all            also scripts/local-llm.sh install, start, status and stop (builds llama-cpp-python
#                    and fetches the model: about 12 more minutes on 2 cores)
#   --refresh-root   rebuild the cached root with debootstrap even when one is present
#   --keep           keep the working root (and its logs) afterwards, for inspection
#
# Environment: KBENCH_FRESH_ROOT_CACHE (default /var/cache/kbench-fresh-root: the pristine root, kept
# outside the repository), KBENCH_FRESH_WORKDIR (default /var/tmp: where each check's copy goes),
# KBENCH_FRESH_MIRROR (default: the Debian mirror apt uses here), KBENCH_FRESH_ALL=1 (as --all).
# Needs root (debootstrap, chroot, mounts); re-runs itself with sudo when it can. Prints each step's wall
# time; on failure the end of the step's log and one last line `check-fresh-install: error: ...`, exit 1.
set -euo pipefail

me="check-fresh-install"
die() {
  echo "$me: error: $*" >&2
  exit 1
}
usage_error() {
  echo "$me: error: $* (see --help)" >&2
  exit 2
}
note() { echo "$me: $*"; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
args=("$@")
rev=HEAD
all="${KBENCH_FRESH_ALL:-0}"
refresh=0
keep=0
while (($#)); do
  case "$1" in
    --commit) (($# >= 2)) || usage_error "--commit needs a value"; rev="$2"; shift 2 ;;
    --all) all=1; shift ;;
    --refresh-root) refresh=1; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n 2,20p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
done

if (($(id -u) != 0)); then
  command -v sudo >/dev/null || die "needs root (debootstrap, chroot, mounts) and there is no sudo"
  exec sudo --preserve-env=KBENCH_FRESH_ROOT_CACHE,KBENCH_FRESH_WORKDIR,KBENCH_FRESH_MIRROR,KBENCH_FRESH_ALL \
    -- "$0" "${args[@]}"
fi

# Debian 12 is what the README promises; the root is the smallest debootstrap makes, so every package
# the project needs must come from its own scripts.
suite=bookworm
variant=minbase
arch="$(dpkg --print-architecture)"
cache="${KBENCH_FRESH_ROOT_CACHE:-/var/cache/kbench-fresh-root}"
tarball="$cache/$suite-$variant-$arch.tar"

# The README's first command, exactly as written, at smoke size on two workloads; then one correct
# example through the three gates, and a candidate on oneMKL; then the XLA:CPU peer, whose first run
# installs jax into .venv-xla (half a minute). The local LLM's build is too long for every CI run, so it waits for --all.
baselines_cmd=(scripts/run-baselines.sh --size smoke -w 8p -w 12p)
eval_cmd=(build/src/kbench eval -w 8p_GEMM -c examples/8p_GEMM_fast.cpp --size smoke)
# oneMKL, which scripts/install-deps.sh puts in .venv-mkl from PyPI: a candidate that can only compile,
# link and run where the build found it and the worker loads it.
mkl_eval_cmd=(build/src/kbench eval -w 8p_GEMM -c tests/candidates/mkl_bf16_gemm.cpp --size smoke)
# llvm-mca-19, which scripts/install-deps.sh installs from Debian's llvm-19.
analyze_cmd=(build/src/kbench analyze -w 12p -c examples/12p_RMSNorm_fast.cpp)
xla_cmd=(scripts/xla-peer.sh --size smoke --warmup 1 --iters 5 8p_GEMM 12p_RMSNorm)
# The tests that skip, rather than fail, where an outside tool is missing (CTest label "tools":
# chromium, NumPy, Slurm, jax), run after the XLA:CPU peer has installed jax: a skip here means the
# project's scripts do not install that tool, which a machine that has it from earlier cannot show.
# The README's command built only the commands; the tests of the label are built first.
tools_build_cmd=(cmake --build build --target tools_tests -j"$(nproc)")
tools_cmd=(ctest --test-dir build -L tools --output-on-failure)
# The fuzz stage of scripts/test.sh, briefly: Clang with libFuzzer, from scripts/install-deps.sh.
fuzz_cmd=(scripts/fuzz.sh 2)

git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || die "$repo is not a git repository (the check clones a commit)"
commit="$(git -C "$repo" rev-parse --verify --quiet "$rev^{commit}")" || die "no commit '$rev' in $repo"
[[ -z "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ]] ||
  note "note: uncommitted changes in $repo are not part of the check (it clones $commit)"

# The first Debian mirror apt uses for $suite, one-line (sources.list) or deb822 (*.sources) format:
# this machine may reach no other.
find_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -r "$f" ]] || continue
    awk -v s="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while (i <= NF && $i !~ /\]$/) i++;
      if ($2 ~ /^\[/) i++; if ($(i + 1) == s) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -r "$f" ]] || continue
    awk -v s="$suite" 'function flush() { if (types ~ /(^| )deb( |$)/ && suites ~ "(^| )" s "( |$)" &&
        enabled !~ /^no$/ && uris != "") { split(uris, u, " "); print u[1]; exit } types = suites = uris = enabled = "" }
      /^[ \t]*$/ { flush(); next } /^#/ { next }
      { key = tolower($1); sub(/^[^:]*:[ \t]*/, "");
        if (key == "types:") types = $0; else if (key == "suites:") suites = $0;
        else if (key == "uris:") uris = $0; else if (key == "enabled:") enabled = tolower($0) }
      END { flush() }' "$f"
  done
}

# --- Steps: each timed, its output in its own log. --------------------------------------------------
work_parent="${KBENCH_FRESH_WORKDIR:-/var/tmp}"
mkdir -p "$work_parent"
work="$(mktemp -d "$work_parent/kbench-fresh.XXXXXX")"
root="$work/root"
logs="$work/logs"
mkdir -p "$logs"
failed=""
job=""
current=""
declare -a summary=()
# Each step runs as a job of its own process group, so an interrupted check can stop all of it.
set -m

# Anything mounted at or below the working root, as the host sees it, deepest first.
mounts_below() {
  awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

cleanup() {
  local status=$? m
  trap - EXIT INT TERM HUP
  if [[ -n "$job" ]]; then
    kill -TERM -- "-$job" 2>/dev/null || true
    wait "$job" 2>/dev/null || true
  fi
  # The chroot's mounts live in a private mount namespace that ends with its last process, so the host
  # should see none; whatever it does see (a namespace setup that failed halfway) comes off here.
  for m in $(mounts_below); do umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  if [[ -n "$(mounts_below)" ]]; then
    # Deleting through a bind mount of /dev or /sys would reach the host's own files.
    echo "$me: error: still mounted under $root, left in place: $(mounts_below | tr '\n' ' ')" >&2
    exit 1
  fi
  local t0=$SECONDS
  if ((keep)); then
    note "kept $work"
  elif ((status == 0)); then
    rm -rf "$work"
    note "removed the working root in $((SECONDS - t0)) s"
  else
    rm -rf "$root"
    note "removed the working root in $((SECONDS - t0)) s; logs kept in $logs"
  fi
  if [[ -n "$failed" ]]; then
    echo "$me: error: $failed" >&2
    exit 1
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'failed="interrupted${current:+ during step '"'"'$current'"'"'}"; exit 130' INT TERM HUP

# step NAME COMMAND...: runs COMMAND with its output in $logs/NAME.log, prints the wall time; on failure
# shows the log's end and ends the check naming the step.
step() {
  local name="$1" start end rc=0
  shift
  current="$name"
  start="$(date +%s.%N)"
  "$@" >"$logs/$name.log" 2>&1 &
  job=$!
  wait "$job" || rc=$?
  job=""
  end="$(date +%s.%N)"
  local secs
  secs="$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')"
  if ((rc != 0)); then
    echo "--- last 25 lines of $logs/$name.log" >&2
    tail -n 25 "$logs/$name.log" >&2
    failed="step '$name' failed (exit $rc after $secs s; log $logs/$name.log)"
    exit 1
  fi
  summary+=("$(printf '%-14s %8s s' "$name" "$secs")")
  note "$(printf '%-14s %8s s' "$name" "$secs")"
}

# The pristine root: debootstrap once into the cache (under a lock, finished atomically), then reused.
build_root_cache() {
  local mirror="$1" tmp
  exec 9>"$cache/.lock"
  flock 9
  if [[ -f "$tarball" ]] && ((!refresh)); then return 0; fi  # another check built it meanwhile
  if ! command -v debootstrap >/dev/null; then
    echo "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  fi
  tmp="$(mktemp -d "$cache/build.XXXXXX")"
  if ! nice -n 10 debootstrap --variant="$variant" --arch="$arch" "$suite" "$tmp/root" "$mirror"; then
    rm -rf "$tmp"
    return 1
  fi
  tar --numeric-owner -C "$tmp/root" -cpf "$tmp/root.tar" . && echo "$mirror" >"$tmp/mirror" &&
    mv "$tmp/root.tar" "$tarball" && mv "$tmp/mirror" "$tarball.mirror"
  local rc=$?
  rm -rf "$tmp"
  return "$rc"
}

unpack_root() {
  mkdir "$root"
  tar --numeric-owner -C "$root" -xpf "$tarball"
}

# A clean clone of the commit (committed files only) where the README's user would have it, with the
# spec beside it as ../shared/spec, where the project reads it (tests, scripts/regen-lists.py).
clone_commit() {
  local dest="$root/kbench/main"
  git clone --quiet --no-checkout "$repo" "$dest"
  # A commit on no branch (a detached CI checkout) is not in every clone.
  git -C "$dest" cat-file -e "$commit^{commit}" 2>/dev/null || git -C "$dest" fetch --quiet "$repo" "$commit"
  git -C "$dest" checkout --quiet --detach "$commit"
  if [[ -d "$repo/../shared/spec" ]]; then
    mkdir -p "$root/kbench/shared"
    cp -a "$repo/../shared/spec" "$root/kbench/shared/spec"
  else
    echo "no $repo/../shared/spec beside the repository: the chroot's clone has none either"
  fi
  # Only this network's own setup comes in: its name server and the CAs it adds (a TLS-inspecting
  # proxy's); the ca-certificates package, once the project's script installs it, trusts them too.
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  # debootstrap writes no /etc/hosts; Debian's installer does, naming this host (the Slurm test's
  # controller is found by the host's name).
  printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
    "$(hostname)" >"$root/etc/hosts"
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp -L /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  fi
  git -C "$dest" log -1 --format='%h %s'
}

# in_root COMMAND: runs the bash command line in the clone, chrooted, as root, with a clean environment.
# The mounts are made in a private mount namespace (and a PID namespace whose end kills whatever the
# command left running), so they cannot outlive it or show on the host.
in_root() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  nice -n 10 unshare --mount --propagation private --pid --fork --kill-child -- /bin/bash -euc '
    root="$1"; shift
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
    chmod 1777 "$root/tmp"
    exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      /bin/bash -euo pipefail -c "cd /kbench/main && $1"' _ "$root" "$1"
}

# eval_example OUT COMMAND...: the eval must complete, say CORRECT and list its sandbox layers with none
# missing (a missing layer is a WARNING line in the verdict).
eval_example() {
  local out="$1"
  shift
  in_root "$(printf '%q ' "$@")" | tee "$out"
  head -n 1 "$out" | grep -q -- '->  CORRECT$' || { echo "the eval did not say CORRECT"; return 1; }
  grep -q '^  sandbox ' "$out" || { echo "the eval listed no sandbox layers"; return 1; }
  if grep -q 'WARNING' "$out"; then
    echo "the eval's sandbox is missing layers"
    return 1
  fi
}

# tools_tests OUT: the tests of the label must build, and every one must run and pass; CTest marks a
# skipped test "Skipped" (or "Not Run") in its line and in the list of tests that did not run.
tools_tests() {
  in_root "$(printf '%q ' "${tools_build_cmd[@]}")" || { echo "the tests labelled tools did not build"; return 1; }
  in_root "$(printf '%q ' "${tools_cmd[@]}")" | tee "$1"
  grep -q 'tests passed' "$1" || { echo "CTest ran no test labelled tools"; return 1; }
  if grep -qE '\*\*\*(Skipped|Not Run)|\((Skipped|Not Run)\)' "$1"; then
    echo "a test labelled tools was skipped: a tool it needs is not installed by the project's scripts"
    return 1
  fi
}

# analyze_example OUT: the analysis must run (llvm-mca-19 installed) and bound some loop by a port.
analyze_example() {
  in_root "$(printf '%q ' "${analyze_cmd[@]}")" | tee "$1"
  grep -q ' port ' "$1" || { echo "the analysis bounded no loop by a port"; return 1; }
}

# --- The check. -------------------------------------------------------------------------------------
note "checking $commit in a fresh $suite ($variant) root; work in $work"
mkdir -p "$cache"
if [[ ! -f "$tarball" ]] || ((refresh)); then
  mirror="${KBENCH_FRESH_MIRROR:-$(find_mirror | head -n 1)}"
  [[ -n "$mirror" ]] || die "no $suite mirror in /etc/apt/sources.list{,.d}; set KBENCH_FRESH_MIRROR"
  note "debootstrap from $mirror into the cache $cache"
  step debootstrap build_root_cache "$mirror"
else
  note "cached root: $tarball ($(cat "$tarball.mirror" 2>/dev/null || echo "mirror unknown"))"
fi
step unpack unpack_root
step clone clone_commit
step run-baselines in_root "$(printf '%q ' "${baselines_cmd[@]}")"
step eval eval_example "$logs/eval.out" "${eval_cmd[@]}"
sed 's/^/    /' "$logs/eval.out"
step mkl-candidate eval_example "$logs/mkl-eval.out" "${mkl_eval_cmd[@]}"
step analyze analyze_example "$logs/analyze.out"
step xla-peer in_root "$(printf '%q ' "${xla_cmd[@]}")"
step tools tools_tests "$logs/tools.out"
step fuzz in_root "$(printf '%q ' "${fuzz_cmd[@]}")"
if ((all)); then
  # A port of its own, so a server on this host's 8088 cannot answer for it.
  step local-llm in_root "scripts/local-llm.sh install && scripts/local-llm.sh start --port 18088 --ctx 2048 &&
    scripts/local-llm.sh status && scripts/local-llm.sh stop"
fi
note "passed: $commit, in $SECONDS s"
printf '  %s\n' "${summary[@]}"
