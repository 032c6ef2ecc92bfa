#!/usr/bin/env bash
# The XLA:CPU peer: runs each workload's JAX program (python/kbench_jax) on `kbench export` inputs,
# checks its outputs with `kbench check`, and times it under XLA:CPU on one core beside kbench's own
# baseline (`kbench run`), printing a markdown table. Installs jax[cpu] from PyPI into a project-local
# venv (.venv-xla/) the first time. docs/baselines.md, section "XLA:CPU peer".
#
#   scripts/xla-peer.sh [--size smoke|cpu] [--kbench PATH] [--markdown FILE] [OPTIONS] [WORKLOAD ...]
#
# Exit status 0 when every check said CORRECT and every timing ran; otherwise 1, with one line
# `xla-peer: error: ...` on stderr (2 for a usage error).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

usage() {
  cat <<'EOF'
usage: scripts/xla-peer.sh [options] [WORKLOAD ...]

  WORKLOAD ...     ids or names (default: every workload `kbench list` shows that has a JAX program)
  --size S         smoke or cpu (default cpu); full is accepted but needs far more memory and time
  --kbench PATH    the kbench executable (default build/src/kbench)
  --markdown FILE  also write the table to FILE
  --json FILE      also write the timings as a JSON array (what `kbench run --markdown --xla FILE`
                   reads for docs/baselines.md's XLA:CPU column)
  --seed N         seed of the exported inputs (default: drawn fresh by kbench export)
  --warmup N       untimed calls before timing, both sides (default 5)
  --iters N        timed calls, both sides (default 50)
  --rounds N       alternate XLA and kbench timings N times; report the median of the medians (default 1)
  --cpu N          the one core both sides are pinned to (default 0)
  --malloc M       allocator of the JAX process: auto (jemalloc when installed), jemalloc or glibc
  --workdir DIR    where the exports go (default: a fresh temporary directory, removed on success)
  --db PATH        results database for kbench check/run (default: kbench's own)
  --no-baseline    skip `kbench run`: check and time the JAX programs only
  --no-timing      check only: no timing on either side
  --no-install     never install: fail if jax is not importable
  --python PATH    use this interpreter (which must import jax) instead of the venv
  -h, --help       this text

Environment: KBENCH_XLA_VENV (default <repo>/.venv-xla), KBENCH_XLA_JAX (pip requirement, default
"jax[cpu]"), PYTHON (interpreter that creates the venv, default python3).
EOF
}

die() {
  echo "xla-peer: error: $*" >&2
  exit 1
}
usage_error() {
  echo "xla-peer: error: $* (see --help)" >&2
  exit 2
}
note() { echo "xla-peer: $*" >&2; }

size=cpu
kbench="$root/build/src/kbench"
markdown=""
json_out=""
seed=""
warmup=5
iters=50
rounds=1
malloc=auto
cpu=0
workdir=""
db=""
baseline=1
timing=1
install=1
python_override=""
workloads=()
while (($#)); do
  case "$1" in
    --size | --kbench | --markdown | --json | --seed | --warmup | --iters | --rounds | --malloc | --cpu | --workdir | --db | --python)
      (($# >= 2)) || usage_error "$1 needs a value"
      case "$1" in
        --size) size="$2" ;;
        --kbench) kbench="$2" ;;
        --markdown) markdown="$2" ;;
        --json) json_out="$2" ;;
        --seed) seed="$2" ;;
        --warmup) warmup="$2" ;;
        --iters) iters="$2" ;;
        --rounds) rounds="$2" ;;
        --malloc) malloc="$2" ;;
        --cpu) cpu="$2" ;;
        --workdir) workdir="$2" ;;
        --db) db="$2" ;;
        --python) python_override="$2" ;;
      esac
      shift 2
      ;;
    --no-baseline) baseline=0; shift ;;
    --no-timing) timing=0; baseline=0; shift ;;
    --no-install) install=0; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) usage_error "unknown option $1" ;;
    *) workloads+=("$1"); shift ;;
  esac
done
case "$size" in smoke | cpu | full) ;; *) usage_error "--size must be smoke or cpu, not '$size'" ;; esac
[[ "$warmup" =~ ^[0-9]+$ && "$iters" =~ ^[1-9][0-9]*$ && "$rounds" =~ ^[1-9][0-9]*$ && "$cpu" =~ ^[0-9]+$ ]] ||
  usage_error "--warmup, --iters, --rounds and --cpu take non-negative integers (--iters, --rounds at least 1)"
[[ -z "$seed" || "$seed" =~ ^[0-9]+$ ]] || usage_error "--seed takes a non-negative integer"
case "$malloc" in auto | jemalloc | glibc) ;; *) usage_error "--malloc must be auto, jemalloc or glibc" ;; esac

[[ "$kbench" = /* ]] || kbench="$PWD/$kbench"
[[ -x "$kbench" ]] || die "kbench not found at $kbench (build it, or pass --kbench PATH)"
command -v taskset >/dev/null || die "taskset not found (Debian package util-linux)"
taskset -c "$cpu" true 2>/dev/null || die "cannot pin to CPU $cpu (allowed: $(taskset -pc $$ | sed 's/.*: //'))"
db_args=()
[[ -z "$db" ]] || db_args=(--db "$db")

# --- The interpreter: the venv's, installing jax[cpu] into it when missing. -------------------------
has_jax() { "$1" -c 'import jax, numpy' >/dev/null 2>&1; }
if [[ -n "$python_override" ]]; then
  py="$python_override"
  has_jax "$py" || die "$py cannot import jax and numpy"
else
  venv="${KBENCH_XLA_VENV:-$root/.venv-xla}"
  py="$venv/bin/python"
  if ! { [[ -x "$py" ]] && has_jax "$py"; }; then
    ((install)) || die "jax not installed in $venv (run scripts/xla-peer.sh without --no-install)"
    base_python="${PYTHON:-python3}"
    command -v "$base_python" >/dev/null || die "$base_python not found (set PYTHON=/path/to/python3)"
    mkdir -p "$venv" || die "cannot create $venv"
    log="$venv/install.log"
    note "creating $venv and installing ${KBENCH_XLA_JAX:-jax[cpu]} from PyPI (log: $log)"
    "$base_python" -m venv "$venv" >"$log" 2>&1 ||
      die "cannot create a venv with $base_python -m venv (Debian: apt-get install python3-venv); see $log"
    "$py" -m pip --version >>"$log" 2>&1 || die "pip unavailable in $venv (Debian: apt-get install python3-venv python3-pip); see $log"
    "$py" -m pip install --disable-pip-version-check -q "${KBENCH_XLA_JAX:-jax[cpu]}" >>"$log" 2>&1 ||
      die "pip install ${KBENCH_XLA_JAX:-jax[cpu]} failed (no PyPI access?); see $log"
    has_jax "$py" || die "jax installed into $venv but does not import; see $log"
  fi
fi
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
jax_version="$("$py" -c 'import jax, jaxlib; print(jax.__version__ + " (jaxlib " + jaxlib.__version__ + ")")')"

# XLA:CPU sizes its thread pools from the CPUs it may run on, so taskset is what makes it one core.
# These flags disable Eigen's multi-threading where the installed XLA still knows them (an unknown
# flag aborts XLA, hence the probe); `intra_op_parallelism_threads=1` is the customary companion.
xla_flags=""
for candidate in "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1" \
  "--xla_cpu_multi_thread_eigen=false"; do
  if XLA_FLAGS="$candidate" "$py" -c 'import jax.numpy as jnp; jnp.ones(2).block_until_ready()' \
    >/dev/null 2>&1; then
    xla_flags="$candidate"
    break
  fi
done
[[ -n "$xla_flags" ]] || note "this XLA knows neither thread flag; pinning with taskset only"

# XLA:CPU allocates every output and temporary per call with malloc, and glibc serves blocks over
# 32 MB with fresh mmaps: at the cpu size 12p's 134 MB output then costs 32768 page faults per call
# (measured: 123 ms of CPU per call against 46 ms under jemalloc). kbench's baselines recycle their
# scratch (ops::F32Buffer) and write into preallocated outputs, so the peer gets a caching allocator
# too: jemalloc with page purging off, which makes steady-state calls fault-free.
jemalloc_lib=""
for candidate in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib64/libjemalloc.so.2 \
  /usr/lib/libjemalloc.so.2; do
  [[ -e "$candidate" ]] && { jemalloc_lib="$candidate"; break; }
done
jax_env=(XLA_FLAGS="$xla_flags")
case "$malloc" in
  jemalloc) [[ -n "$jemalloc_lib" ]] || die "libjemalloc.so.2 not found (Debian: apt-get install libjemalloc2)" ;;
  auto)
    if [[ -z "$jemalloc_lib" ]]; then
      note "libjemalloc.so.2 not found: the JAX process uses glibc malloc, which slows XLA's large-buffer workloads (Debian: apt-get install libjemalloc2)"
      malloc=glibc
    else
      malloc=jemalloc
    fi
    ;;
esac
[[ "$malloc" == glibc ]] ||
  jax_env+=(LD_PRELOAD="$jemalloc_lib${LD_PRELOAD:+:$LD_PRELOAD}" MALLOC_CONF="dirty_decay_ms:-1,muzzy_decay_ms:-1")

# --- The workloads. ----------------------------------------------------------------------------------
list_json="$("$kbench" list --json)" || die "$kbench list --json failed"
mapfile -t resolved < <("$py" - "$list_json" "${workloads[@]}" <<'EOF'
import json, sys
from kbench_jax import PROGRAMS
listed = json.loads(sys.argv[1])
names = {}
for w in listed:
    names[w["id"]] = names[w["name"]] = w["name"]
wanted = sys.argv[2:]
if wanted:
    for w in wanted:
        if w not in names:
            print(f"!unknown workload '{w}' (kbench list: {', '.join(x['name'] for x in listed)})")
        elif names[w] not in PROGRAMS:
            print(f"!no JAX program for {names[w]} in python/kbench_jax")
        else:
            print(names[w])
else:
    for w in listed:
        print(w["name"] if w["name"] in PROGRAMS else "?" + w["name"])
EOF
)
selected=()
for r in "${resolved[@]}"; do
  case "$r" in
    '!'*) die "${r#!}" ;;
    '?'*) note "skipping ${r#?}: no JAX program in python/kbench_jax" ;;
    *) selected+=("$r") ;;
  esac
done
((${#selected[@]})) || die "no workloads to run"

if [[ -z "$workdir" ]]; then
  workdir="$(mktemp -d "${TMPDIR:-/tmp}/kbench-xla-peer.XXXXXX")"
  trap '[[ $? -eq 0 ]] && rm -rf "$workdir"' EXIT  # kept on failure: the errors point into it
fi
mkdir -p "$workdir" || die "cannot create $workdir"

# Reads one value out of a JSON file: json_get FILE EXPR (EXPR over `d`, e.g. 'd[0]["status"]').
json_get() {
  "$py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2], {"d": d})
print("" if v is None else v)' "$1" "$2"
}

# Runs the JAX program on one core: run_jax NAME DIR REPORT_JSON RUNNER_ARGS...
run_jax() {
  local name="$1" dir="$2" report="$3"
  shift 3
  env "${jax_env[@]}" taskset -c "$cpu" "$py" -m kbench_jax.runner "$dir" --json "$@" \
    >"$report" 2>"$dir/xla.log" ||
    die "$name: the JAX program failed: $(grep -m1 'kbench_jax: error' "$dir/xla.log" || tail -n1 "$dir/xla.log")"
}

rows=()
json_rows=()
failures=()
for name in "${selected[@]}"; do
  dir="$workdir/$name"
  mkdir -p "$dir"
  note "$name: export (size $size)"
  seed_args=()
  [[ -z "$seed" ]] || seed_args=(--seed "$seed")
  "$kbench" export -w "$name" --size "$size" "${seed_args[@]}" --out "$dir" --force \
    >"$dir/export.log" 2>&1 || die "$name: kbench export failed; see $dir/export.log"
  run_seed="$(json_get "$dir/workload.json" 'd["seed"]')"

  note "$name: JAX program (seed $run_seed)"
  timing_args=(--no-timing)
  ((timing)) && timing_args=(--warmup "$warmup" --iters "$iters")
  run_jax "$name" "$dir" "$dir/xla.json" "${timing_args[@]}"

  "$kbench" check -w "$name" --size "$size" --outputs "$dir" --json "${db_args[@]}" \
    >"$dir/check.json" 2>"$dir/check.log" || die "$name: kbench check failed; see $dir/check.log"
  status="$(json_get "$dir/check.json" 'd["status"]')"
  verdict="$(tr '[:lower:]' '[:upper:]' <<<"$status")"
  rel_l2="$(json_get "$dir/check.json" '"%.2g" % d["correctness"]["rel_l2_err"]' 2>/dev/null || echo "?")"
  note "$name: check $verdict (seed $run_seed, rel_l2 $rel_l2)"
  if [[ "$status" != correct ]]; then
    failures+=("$name check $verdict for seed $run_seed: $(json_get "$dir/check.json" 'd["error"]')")
  fi

  xla_ms="-"
  kb_ms="-"
  ratio="-"
  if ((timing)); then
    # Rounds alternate the two sides, so drift in the machine's load reaches both alike.
    cp "$dir/xla.json" "$dir/xla.1.json"
    for ((round = 1; round <= rounds; ++round)); do
      ((round == 1)) || run_jax "$name" "$dir" "$dir/xla.$round.json" "${timing_args[@]}"
      if ((baseline)); then
        note "$name: kbench baseline (round $round of $rounds)"
        taskset -c "$cpu" "$kbench" run -w "$name" --size "$size" --threads 1 --warmup "$warmup" \
          --iters "$iters" --json "${db_args[@]}" >"$dir/run.$round.json" 2>"$dir/run.log" ||
          die "$name: kbench run failed; see $dir/run.log"
        run_status="$(json_get "$dir/run.$round.json" 'd[0]["status"]')"
        [[ "$run_status" == correct ]] ||
          die "$name: kbench run says $run_status: $(json_get "$dir/run.$round.json" 'd[0]["error"]')"
      fi
    done
    # Per side: the median over rounds of each round's median, and the minimum over every call.
    IFS='|' read -r xla_ms kb_ms ratio row_json < <("$py" - "$dir" "$rounds" "$baseline" "$name" "$size" <<'EOF_PY'
import json, statistics, sys
d, rounds, baseline, name, size = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4], sys.argv[5]
xla = [json.load(open(f"{d}/xla.{r}.json")) for r in range(1, rounds + 1)]
x_med = statistics.median(x["median_ms"] for x in xla)
cells = ["%.3f (min %.3f)" % (x_med, min(x["min_ms"] for x in xla)), "-", "-"]
row = {"workload": name, "size": size, "xla_median_ms": x_med, "rounds": rounds}
if baseline:
    kb = [json.load(open(f"{d}/run.{r}.json"))[0]["baseline"] for r in range(1, rounds + 1)]
    k_med = statistics.median(k["median_ms"] for k in kb)
    cells[1:] = ["%.3f (min %.3f)" % (k_med, min(k["min_ms"] for k in kb)), "%.2f" % (x_med / k_med)]
    row.update(kbench_median_ms=k_med, xla_over_kbench=x_med / k_med)
print("|".join(cells + [json.dumps(row)]))
EOF_PY
    )
    json_rows+=("$row_json")
    [[ -n "$xla_ms" ]] || die "$name: cannot summarize the timings in $dir"
  fi
  rows+=("| $name | $size | $xla_ms | $kb_ms | $ratio | $verdict (seed $run_seed) |")
done

table="$(
  echo "| workload | size | XLA:CPU median ms | kbench baseline median ms | ratio (XLA / kbench) | kbench check |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "jax $jax_version, XLA:CPU pinned with \`taskset -c $cpu\`, XLA_FLAGS='$xla_flags', $malloc malloc; kbench baseline" \
    "\`kbench run --threads 1\` on the same core; $warmup warm-up + $iters timed calls per side, $rounds round(s);" \
    "both sides' times are wall time minus the run-queue wait of the busiest thread (kbench's adjusted time);" \
    "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')."
)"
echo "$table"
if [[ -n "$markdown" ]]; then
  echo "$table" >"$markdown" || die "cannot write $markdown"
fi
if [[ -n "$json_out" ]]; then
  (IFS=','; echo "[${json_rows[*]}]") >"$json_out" || die "cannot write $json_out"
fi
((${#failures[@]} == 0)) || die "$(IFS=';'; echo "${failures[*]}")"
