#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A private single-node Slurm cluster on localhost for tests (Debian's slurm-wlm):
#   scripts/slurm_local.sh start DIR   writes DIR/slurm.conf, starts slurmctld and slurmd, waits
#                                      until the node is idle; prints "export SLURM_CONF=..."
#   scripts/slurm_local.sh stop DIR    stops both and waits for them to exit
# Private ports and state under DIR, no munge (auth/none), no accounting: nothing outside DIR
# is touched. Needs root (slurmd runs jobs as their submitting user).
set -euo pipefail
cmd="${1:?usage: slurm_local.sh start|stop DIR}"
DIR="$(mkdir -p "${2:?usage: slurm_local.sh start|stop DIR}" && cd "$2" && pwd)"
export SLURM_CONF="$DIR/slurm.conf"
case "$cmd" in
  start)
    command -v slurmctld >/dev/null || { echo "slurm_local: slurmctld not found (apt-get install slurm-wlm)" >&2; exit 2; }
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
    port=$((20000 + RANDOM % 20000))
    cat > "$SLURM_CONF" <<CONF
ClusterName=portbench-test
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
    slurmctld -c
    slurmd -c -N localhost
    for _ in $(seq 1 60); do
      if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then echo "export SLURM_CONF=$SLURM_CONF"; exit 0; fi
      sleep 0.5
    done
    echo "slurm_local: the node did not come up (logs in $DIR/log)" >&2
    exit 1
    ;;
  stop)
    for p in slurmd slurmctld; do
      [[ -f "$DIR/$p.pid" ]] && kill "$(cat "$DIR/$p.pid")" 2>/dev/null || true
    done
    for _ in $(seq 1 40); do
      alive=0
      for p in slurmd slurmctld; do
        [[ -f "$DIR/$p.pid" ]] && kill -0 "$(cat "$DIR/$p.pid")" 2>/dev/null && alive=1
      done
      ((alive)) || exit 0
      sleep 0.25
    done
    echo "slurm_local: slurmd/slurmctld still running" >&2
    exit 1
    ;;
  *) echo "usage: slurm_local.sh start|stop DIR" >&2; exit 2 ;;
esac
