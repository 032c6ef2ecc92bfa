#!/usr/bin/env bash
# A one-node Slurm cluster for tests, started by hand (no systemd) in a private directory:
#   one_node_cluster.sh start DIR   munged, slurmctld and slurmd with their files under DIR; prints
#                                   the SLURM_CONF to export, or exits 77 saying why it cannot start
#   one_node_cluster.sh stop DIR    ends the three daemons by the pids they wrote
# Everything runs as the calling user (root in CI); ports are chosen free. Processes are tracked by
# proctrack/linuxproc and pinned by task/affinity, which need no cgroup mount: tasks are pinned, not
# confined (a real cluster uses proctrack/cgroup; docs/cluster.md).
set -euo pipefail

skip() {
  echo "slurm cluster: cannot start: $*" >&2
  exit 77
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local dir=$1
  for tool in munged slurmctld slurmd sbatch scontrol squeue; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
  done
  [[ $(id -u) -eq 0 ]] || skip "the daemons run as root here (the test's one-node cluster)"
  mkdir -p "$dir"/{munge,state,spool,log}
  chmod 700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  local socket=$dir/munge/munge.socket
  munged --force --socket="$socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" || skip "munged did not start ($(tail -1 "$dir/log/munged.log" 2>/dev/null))"

  local host node
  host=$(hostname -s)
  node=$(slurmd -C | head -1) || skip "slurmd -C failed"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=kbench-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
JobRequeue=1
ReturnToService=2
KillWait=30
MpiDefault=none
$node
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" || skip "slurmctld did not start ($(tail -1 "$dir/log/slurmctld.log" 2>/dev/null))"
  slurmd -f "$SLURM_CONF" || skip "slurmd did not start ($(tail -1 "$dir/log/slurmd.log" 2>/dev/null))"
  for _ in $(seq 100); do
    if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
      echo "$SLURM_CONF"
      return 0
    fi
    sleep 0.1
  done
  skip "the node did not come up: $(sinfo -h 2>&1 | head -1); $(tail -1 "$dir/log/slurmd.log" 2>/dev/null)"
}

stop() {
  local dir=$1
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [[ -f $pidfile ]] || continue
    local pid
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  done
}

case ${1:-} in
  start) start "$2" ;;
  stop) stop "$2" ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
