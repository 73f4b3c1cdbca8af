# A single-node Slurm cluster for tests, built in a temporary directory:
# munged with its own key and socket, slurmctld and slurmd for this host,
# and the environment (SLURM_CONF) that makes sbatch, squeue and sinfo talk
# to it.  Nothing outside the directory is written, nothing installed; the
# machine's own munge and Slurm configuration (if any) are never read.
#
# Written for Debian 12's slurm-wlm 22.05 and munge 0.5.15 (option names
# checked against `munged --help` and slurm.conf(5) of 22.05).
#
# Source it from bash, then:
#   slurm_cluster_start DIR   start munged, slurmctld, slurmd; wait for the
#                             node to be idle.  Returns 77 (meson's skip) with
#                             the reason on stderr when the cluster cannot run
#                             here (not root, programs missing, daemons do not
#                             come up; the tail of their logs is printed).
#   slurm_cluster_stop        kill the three daemons (by the pids it started)
#                             and wait for them.  Safe to call twice.
# The caller owns DIR (mktemp -d) and removes it after slurm_cluster_stop;
# install the trap before starting so a failed start also cleans up.

slurm_cluster_pids=()

slurm_cluster_skip() {
  echo "SKIP: $*" >&2
  return 77
}

# Prints the tail of every daemon log under the cluster directory.
slurm_cluster_logs() {
  local f
  for f in "$SLURM_CLUSTER_DIR"/log/*; do
    [ -f "$f" ] || continue
    echo "--- tail of $f" >&2
    tail -n 15 "$f" >&2
  done
}

# A TCP port nobody listens on, from a range away from Slurm's defaults
# (6817/6818) so a real cluster on the machine is not disturbed.
slurm_cluster_free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

slurm_cluster_start() {
  local dir=$1 prog
  SLURM_CLUSTER_DIR=$dir
  [ "$(id -u)" -eq 0 ] || { slurm_cluster_skip "needs root (slurmd runs jobs as any user; munged's key must be root's)"; return 77; }
  for prog in munged slurmctld slurmd sbatch sinfo squeue; do
    command -v "$prog" >/dev/null \
      || { slurm_cluster_skip "$prog not installed (Debian: apt-get install slurm-wlm munge)"; return 77; }
  done

  mkdir -p "$dir"/munge "$dir"/log "$dir"/state "$dir"/spool "$dir"/run
  chmod 0700 "$dir"/munge
  dd if=/dev/urandom of="$dir"/munge/munge.key bs=1024 count=1 status=none
  chown root:root "$dir"/munge/munge.key
  chmod 0400 "$dir"/munge/munge.key

  local sock=$dir/munge/munge.socket
  munged --foreground --force \
    --socket="$sock" --key-file="$dir"/munge/munge.key \
    --pid-file="$dir"/run/munged.pid --log-file="$dir"/log/munged.log \
    --seed-file="$dir"/munge/munged.seed > "$dir"/log/munged.stdout 2>&1 &
  slurm_cluster_pids+=($!)
  local i
  for i in $(seq 100); do
    [ -S "$sock" ] && break
    kill -0 "${slurm_cluster_pids[0]}" 2>/dev/null || break   # munged exited
    sleep 0.1
  done
  [ -S "$sock" ] || { slurm_cluster_logs; slurm_cluster_skip "munged did not come up (no socket after 10 s, or it exited)"; return 77; }

  local host ctld_port slurmd_port node_line
  host=$(hostname -s)
  ctld_port=$(slurm_cluster_free_port) && slurmd_port=$(slurm_cluster_free_port) \
    || { slurm_cluster_skip "no free TCP port for slurmctld/slurmd"; return 77; }
  # slurmd -C prints this host's NodeName line (CPUs, sockets, RealMemory);
  # its second line is the uptime, which slurm.conf does not take.
  node_line=$(slurmd -C 2>/dev/null | head -n 1)
  case $node_line in
    NodeName=*) ;;
    *) node_line="NodeName=$host CPUs=$(nproc)" ;;
  esac

  cat > "$dir"/slurm.conf <<CONF
ClusterName=iosimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroup: the test may run in a container without a writable hierarchy.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
MailProg=/bin/true
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf

  slurmctld -D -i -f "$dir"/slurm.conf > "$dir"/log/slurmctld.stdout 2>&1 &
  slurm_cluster_pids+=($!)
  slurmd -D -f "$dir"/slurm.conf > "$dir"/log/slurmd.stdout 2>&1 &
  slurm_cluster_pids+=($!)

  local state=""
  for i in $(seq 120); do
    state=$(sinfo -h -N -o '%t' 2>/dev/null | head -n 1)
    [ "$state" = idle ] && return 0
    kill -0 "${slurm_cluster_pids[1]}" 2>/dev/null && kill -0 "${slurm_cluster_pids[2]}" 2>/dev/null \
      || break                                                 # a daemon exited
    sleep 0.5
  done
  slurm_cluster_logs
  slurm_cluster_skip "the node did not become idle (sinfo state: '${state:-none}'; 60 s at most, less if a daemon exited)"
  return 77
}

slurm_cluster_stop() {
  local pid i
  # Jobs still queued or running (the test was interrupted) are cancelled
  # while slurmctld can still do it, so no slurmstepd outlives the cluster.
  if [ ${#slurm_cluster_pids[@]} -eq 3 ] && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
    scancel --full --quiet --user="$(id -un)" 2>/dev/null
    for i in $(seq 50); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for pid in "${slurm_cluster_pids[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${slurm_cluster_pids[@]}"; do
    wait "$pid" 2>/dev/null
  done
  slurm_cluster_pids=()
}
