# SPDX-License-Identifier: MIT
# A private single-node Slurm cluster for one test (sourced after
# tests/lib.sh and setup/setup_tmp, not run).
#
#   slurm_start        start munged, slurmctld and slurmd under $WORK/slurm,
#                      export SLURM_CONF, wait until the node is idle;
#                      skips the test (exit 77) saying why when Slurm cannot
#                      run here (not root, or the daemons do not come up);
#                      a missing Slurm or munge program is a failure
#   slurm_stop         cancel what is left of our jobs, stop the daemons
#                      (also run from the EXIT trap, which slurm_start chains
#                      in front of tests/lib.sh's cleanup)
#   slurm_job_state ID the state sacct-less Slurm still knows for job ID
#
# Nothing is shared with the host or with another test running at the same
# time: the munge key, munge socket, configuration, state and spool
# directories live in $WORK/slurm, the cluster name is unique, and both
# daemons listen on ports the kernel had free a moment before (taken again
# if a daemon finds its port in use). Daemons run in the foreground as
# children of the test, so they are stopped by their process ids only.

SLURM_DIR=
SLURM_PIDS=
SLURM_TRIES=${SLURM_TRIES:-4}

# _slurm_free_ports N: N distinct TCP ports free on 127.0.0.1 right now.
_slurm_free_ports() {
	"$PYTHON" - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# _slurm_wait SECONDS COMMAND...: retry COMMAND (quietly) every 0.2 s; give
# up at once when it returns 99 (a daemon died).
_slurm_wait() {
	local n=$(($1 * 5)) rc
	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && return 0
		[ "$rc" -eq 99 ] && return 1
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}

# _slurm_alive: every daemon we started is still running (a daemon that
# died stays a zombie until we wait for it: kill -0 would still succeed).
_slurm_alive() {
	local p st
	for p in $SLURM_PIDS; do
		st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' \
			"/proc/$p/status" 2>/dev/null)
		case $st in
		'' | Z | X) return 1 ;;
		esac
	done
}

# _slurm_kill PID...: TERM, then KILL after 5 s; reap our children.
_slurm_kill() {
	local p n
	for p in "$@"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "$@"; do
		n=25
		while kill -0 "$p" 2>/dev/null && [ "$n" -gt 0 ]; do
			sleep 0.2
			n=$((n - 1))
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	return 0
}

_slurm_munge_start() {
	local m=$SLURM_DIR/munge
	# munged wants its socket reachable by every user: the directories
	# above it must be searchable (not readable) by all
	chmod 0711 "$WORK" "$SLURM_DIR"
	mkdir -m 0755 "$m"
	# a fresh key: no other cluster can talk to ours, nor we to it
	mungekey --create --keyfile="$m/munge.key" >/dev/null 2>&1 ||
		head -c 1024 /dev/urandom >"$m/munge.key"
	chmod 0400 "$m/munge.key"
	munged --foreground --socket="$m/munge.socket" \
		--key-file="$m/munge.key" --pid-file="$m/munged.pid" \
		--log-file="$m/munged.log" --seed-file="$m/munged.seed" \
		--num-threads=2 >"$m/munged.out" 2>&1 &
	SLURM_MUNGED_PID=$!
	SLURM_PIDS=$SLURM_MUNGED_PID
	_slurm_wait 10 _slurm_munge_ok "$m/munge.socket"
}

# _slurm_munge_ok SOCKET: a credential made and decoded through SOCKET.
_slurm_munge_ok() {
	_slurm_alive || return 99
	# munge itself retries for seconds while there is no socket yet
	[ -S "$1" ] || return 1
	munge -S "$1" -n | unmunge -S "$1"
}

# _slurm_conf CTLD_PORT SLURMD_PORT: write $SLURM_DIR/slurm.conf.
_slurm_conf() {
	local d=$SLURM_DIR
	: >"$d/plugstack.conf"
	cat >"$d/slurm.conf" <<EOF
# written by tests/helpers/slurm.sh for $T_NAME (pid $$)
ClusterName=imgfs$$x$RANDOM
SlurmctldHost=localhost
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
PlugStackConfig=$d/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
InactiveLimit=0
KillWait=5
MessageTimeout=30
SlurmctldTimeout=60
SlurmdTimeout=60
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=imgfs Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

# _slurm_ping: slurmctld answers (99: a daemon of ours died).
_slurm_ping() {
	_slurm_alive || return 99
	scontrol ping
}

# _slurm_idle: sinfo shows our node idle (or mixed: a job got there first).
_slurm_idle() {
	_slurm_alive || return 99
	sinfo -h -N -n localhost -o '%T' 2>/dev/null | grep -qxE 'idle|mixed'
}

# _slurm_daemons_start: one attempt at slurmctld + slurmd on fresh ports.
_slurm_daemons_start() {
	local d=$SLURM_DIR ports
	ports=$(_slurm_free_ports 2) || return 1
	# shellcheck disable=SC2086
	_slurm_conf $ports
	rm -rf "$d/state" "$d/spool"
	mkdir -p "$d/state" "$d/spool" "$d/log"
	# started in $d: job steps (slurmstepd) inherit the directory, which
	# is how slurm_stop recognises ours
	(cd "$d" && exec slurmctld -D -i -f "$d/slurm.conf") \
		>"$d/log/slurmctld.out" 2>&1 &
	SLURM_CTLD_PID=$!
	SLURM_PIDS="$SLURM_PIDS $SLURM_CTLD_PID"
	if ! _slurm_wait 20 _slurm_ping; then
		_slurm_kill "$SLURM_CTLD_PID"
		SLURM_PIDS=$SLURM_MUNGED_PID
		return 1
	fi
	(cd "$d" && exec slurmd -D -N localhost -f "$d/slurm.conf") \
		>"$d/log/slurmd.out" 2>&1 &
	SLURM_SLURMD_PID=$!
	SLURM_PIDS="$SLURM_PIDS $SLURM_SLURMD_PID"
	if ! _slurm_wait 30 _slurm_idle || ! _slurm_alive; then
		_slurm_kill "$SLURM_SLURMD_PID" "$SLURM_CTLD_PID"
		SLURM_PIDS=$SLURM_MUNGED_PID
		return 1
	fi
}

# _slurm_why: the last lines of every log, to say why Slurm did not start.
_slurm_why() {
	local f
	for f in "$SLURM_DIR"/munge/munged.log "$SLURM_DIR"/munge/munged.out \
		"$SLURM_DIR"/log/*; do
		[ -s "$f" ] || continue
		log "--- $f:"
		tail -n 8 "$f" | sed 's/^/    /'
	done
}

_slurm_exit() {
	local rc=$?
	slurm_stop
	(exit "$rc")
	cleanup
}

slurm_start() {
	local t p
	[ -n "$WORK" ] || die "slurm_start needs setup_tmp first"
	[ "$(id -u)" -eq 0 ] || skip "Slurm: slurmd must run as root here"
	# like any other tool the tests need: missing is a broken setup
	for t in munged mungekey munge unmunge slurmctld slurmd sbatch sinfo \
		squeue scontrol scancel; do
		command -v "$t" >/dev/null 2>&1 ||
			die "missing tool: $t (Debian packages slurm-wlm and munge)"
	done
	SLURM_DIR=$WORK/slurm
	mkdir -m 0700 "$SLURM_DIR"
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	# variables of an enclosing Slurm job would redirect our clients
	for p in $(env | sed -n 's/^\(SLURM_[A-Z_]*\)=.*/\1/p'); do
		[ "$p" = SLURM_CONF ] || unset "$p"
	done
	trap _slurm_exit EXIT
	if ! _slurm_munge_start; then
		_slurm_why
		skip "Slurm: munged did not start (see above)"
	fi
	t=1
	until _slurm_daemons_start; do
		if [ "$t" -ge "$SLURM_TRIES" ]; then
			_slurm_why
			skip "Slurm: no idle node after $t attempts (see above)"
		fi
		# e.g. a port taken between our pick and the daemon's bind
		log "Slurm did not come up (attempt $t), trying other ports"
		t=$((t + 1))
	done
	log "Slurm up: $(sinfo -h -N -o '%N %T %c CPUs') (slurmctld" \
		"$SLURM_CTLD_PID, slurmd $SLURM_SLURMD_PID)"
}

# _slurm_stray: job steps of our cluster still running (slurmstepd
# processes working in $SLURM_DIR) and every process under them, by pid.
_slurm_stray() {
	"$PYTHON" - "$SLURM_DIR" <<'EOF'
import os, sys
top = sys.argv[1]
parent, steps = {}, set()
for p in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{p}/stat") as f:
            parent[p] = f.read().rsplit(")", 1)[1].split()[1]
        with open(f"/proc/{p}/cmdline", "rb") as f:
            cmd = f.read()
        if cmd.startswith(b"slurmstepd:") and os.readlink(f"/proc/{p}/cwd") == top:
            steps.add(p)
    except OSError:
        pass
ours = set(steps)
while True:
    more = {p for p, pp in parent.items() if pp in ours} - ours
    if not more:
        break
    ours |= more
print(" ".join(sorted(ours, key=int)))
EOF
}

slurm_stop() {
	local ids
	[ -n "$SLURM_PIDS" ] || return 0
	if _slurm_alive; then
		ids=$(squeue -h -t all -o %A 2>/dev/null | sort -u)
		# shellcheck disable=SC2086
		[ -z "$ids" ] || scancel --quiet $ids >/dev/null 2>&1
		_slurm_wait 15 sh -c '[ -z "$(squeue -h -o %A)" ]'
	fi
	# shellcheck disable=SC2086
	_slurm_kill $SLURM_PIDS
	SLURM_PIDS=
	ids=$(_slurm_stray)
	if [ -n "$ids" ]; then
		log "warning: ending job processes left behind: $ids"
		# shellcheck disable=SC2086
		_slurm_kill $ids
	fi
	return 0
}

# slurm_job_state ID: the job's state as slurmctld reports it (COMPLETED,
# FAILED, ...); for an array job, one line per task.
slurm_job_state() {
	squeue -h -t all -j "$1" -o '%i %T' 2>/dev/null
}
