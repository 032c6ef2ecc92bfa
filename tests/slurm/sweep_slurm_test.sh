#!/usr/bin/env bash
# kbench sweep on a one-node Slurm cluster started for the test (tests/slurm/one_node_cluster.sh):
# a 4-cell smoke sweep as an array job, a task cancelled and the sweep resubmitted, a running task
# requeued, and the shards merged into one database whose results equal a plain `kbench run` of
# the same workloads in cells and statuses, each cell once. Exits 77 (CTest: skipped) where Slurm
# cannot start.
#   sweep_slurm_test.sh KBENCH
set -euo pipefail
kbench=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/kbench-slurm-test.XXXXXX)
cluster=$work/cluster
cleanup() {
  [[ -n ${KEEP:-} ]] && return
  "$here/one_node_cluster.sh" stop "$cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  for log in "$cluster"/log/*.log "$work"/sweep/logs/*.log; do
    [[ -f $log ]] && { echo "--- $log" >&2; tail -5 "$log" >&2; }
  done
  exit 1
}

conf=$("$here/one_node_cluster.sh" start "$cluster") || exit $?
export SLURM_CONF=$conf
export KBENCH_SWEEP_LOCAL=$work/local
mkdir -p "$KBENCH_SWEEP_LOCAL"

wait_idle() {  # until the cluster runs no job (or fail after $1 s)
  local deadline=$((SECONDS + $1))
  while [[ -n $(squeue -h 2>/dev/null) ]]; do
    ((SECONDS < deadline)) || fail "jobs still queued after $1 s: $(squeue -h | head -3)"
    sleep 0.5
  done
}

status_json() { "$kbench" sweep status "$work/sweep" --json; }
count() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

workloads=(-w 12p -w 18k -w 19k -w 9p)
sweep=("$kbench" sweep "${workloads[@]}" --size smoke --no-experts --out "$work/sweep"
  --executor slurm --cpus-per-task 1)

echo "== [${SECONDS}s] a 4-cell sweep, one task cancelled while queued"
"${sweep[@]}" --max-parallel 1 | tee "$work/submit.txt"
job=$(sed -n 's/.* as Slurm job \([0-9]*\);.*/\1/p' "$work/submit.txt")
[[ -n $job ]] || fail "no job id in: $(cat "$work/submit.txt")"
scancel "${job}_3" || fail "scancel ${job}_3"
wait_idle 300
[[ $(status_json | count done) -eq 3 ]] || fail "3 cells done expected: $("$kbench" sweep status "$work/sweep")"
[[ $(status_json | count pending) -eq 1 ]] || fail "the cancelled cell should be pending"

echo "== [${SECONDS}s] resubmitted: only the cancelled cell runs"
"${sweep[@]}" | tee "$work/submit2.txt"
grep -q "submitted 1 cells" "$work/submit2.txt" || fail "expected one cell resubmitted"
wait_idle 300
[[ $(status_json | count done) -eq 4 ]] || fail "4 cells done expected: $("$kbench" sweep status "$work/sweep")"

echo "== [${SECONDS}s] a running task requeued: its copy that runs again finds the cell done"
rm -rf "$work/sweep2"
"$kbench" sweep -w 8p --size smoke --no-experts --out "$work/sweep2" --executor slurm | tee "$work/submit3.txt"
job=$(sed -n 's/.* as Slurm job \([0-9]*\);.*/\1/p' "$work/submit3.txt")
for _ in $(seq 200); do
  [[ -f $work/sweep2/cells/run-8p_GEMM/attempt-1.json ]] && break
  sleep 0.05
done
scontrol requeue "${job}_0" || fail "scontrol requeue ${job}_0"
# Slurm holds a requeued job back (BeginTime, two minutes) once its first copy has ended; the test
# lets it start at once.
for _ in $(seq 200); do
  scontrol show job "${job}_0" 2>/dev/null | grep -q "Reason=BeginTime" && break
  sleep 0.1
done
# slurmd refuses to launch a copy whose credential is no newer, in whole seconds, than the
# revocation of the first copy's: released within that second, the copy was killed as
# "non-startable batch job: Job credential revoked" and the cell stayed pending.
sleep 2
scontrol update JobId="${job}_0" StartTime=now || fail "cannot release the requeued task"
wait_idle 300
"$kbench" sweep status "$work/sweep2"
[[ $("$kbench" sweep status "$work/sweep2" --json | count done) -eq 1 ]] || fail "the requeued cell is not done"
"$kbench" merge "$work/merged2.db" "$work"/sweep2/shards/*.db | tail -1 | grep -q ": 1 runs, 1 results" ||
  fail "the requeued cell's shard should hold one run with one result"

echo "== [${SECONDS}s] merged: the cells and statuses of a plain kbench run"
"$kbench" merge "$work/merged.db" "$work"/sweep/shards/*.db
"$kbench" merge "$work/merged.db" "$work"/sweep/shards/*.db | grep -q " 0 runs, 0 results" ||
  fail "a second merge added something"
"$kbench" results --db "$work/merged.db" --kind run --format json --limit 100 >"$work/merged.json"
"$kbench" run "${workloads[@]}" --size smoke --no-experts --no-record --json >"$work/plain.json"
python3 - "$work/merged.json" "$work/plain.json" <<'PY' || fail "merged results differ from a plain run"
import json, sys
merged = json.load(open(sys.argv[1]))
plain = json.load(open(sys.argv[2]))
cells = lambda rows: sorted((r["workload"], r["status"]) for r in rows)
print("merged:", cells(merged))
print("plain: ", cells(plain))
sys.exit(0 if cells(merged) == cells(plain) else 1)
PY
echo "PASS"
