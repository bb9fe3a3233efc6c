#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/helpers/slurm.sh on its own: two private single-node clusters started
# at the same time (each runs a 4-task job array with sbatch --wait, and each
# task reports its own index), then a cluster whose slurmd is killed while a
# job runs: stopping it ends every daemon and job process, leaving nothing;
# that cluster is started while its first ports are taken.
set -u
. "$(dirname "$0")/../lib.sh"
. "$top_srcdir/tests/helpers/slurm.sh"

# inner: one cluster, one array job; prints "CLUSTER name port" for the
# caller to check the two runs did not share anything.
if [ "${1:-}" = inner ]; then
	T_NAME="slurm[$2]"
	setup_tmp
	slurm_start
	cd "$WORK" || die "cd $WORK"
	cat >task.sh <<'EOF'
#!/bin/sh
printf '%s %s\n' "$SLURM_ARRAY_TASK_ID" "$SLURM_ARRAY_TASK_COUNT" \
	>"out.$SLURM_ARRAY_TASK_ID"
EOF
	if sbatch --wait --array=0-3 -o 'log.%a' task.sh >sbatch.out; then
		ok "sbatch --wait --array=0-3: $(cat sbatch.out)"
	else
		fail "sbatch --wait --array=0-3"
	fi
	for i in 0 1 2 3; do
		check "task $i ran once, saw 4 tasks" \
			[ "$(cat "out.$i" 2>/dev/null)" = "$i 4" ]
	done
	id=$(sed -n 's/^Submitted batch job //p' sbatch.out)
	n=$(slurm_job_state "$id" | grep -c ' COMPLETED$')
	check "4 array tasks COMPLETED (squeue: $n)" [ "$n" = 4 ]
	printf 'CLUSTER %s %s\n' \
		"$(sed -n 's/^ClusterName=//p' "$SLURM_CONF")" \
		"$(sed -n 's/^SlurmctldPort=//p' "$SLURM_CONF")"
	finish
fi

require_tools "$PYTHON"
[ "$(id -u)" -eq 0 ] || skip "Slurm: slurmd must run as root here"
setup_tmp

# Two clusters at once: neither may see the other's daemons or jobs.
bash "$0" inner 1 >"$WORK/one.out" 2>&1 &
p1=$!
bash "$0" inner 2 >"$WORK/two.out" 2>&1 &
p2=$!
wait "$p1"
r1=$?
wait "$p2"
r2=$?
sed 's/^/  /' "$WORK/one.out" "$WORK/two.out"
[ "$r1" -eq 77 ] && [ "$r2" -eq 77 ] && skip "Slurm cannot start here (above)"
check "first cluster: array job done" [ "$r1" -eq 0 ]
check "second cluster at the same time: array job done" [ "$r2" -eq 0 ]
c1=$(sed -n 's/^CLUSTER //p' "$WORK/one.out")
c2=$(sed -n 's/^CLUSTER //p' "$WORK/two.out")
check "distinct cluster names and ports ($c1 / $c2)" \
	[ -n "$c1" ] && [ -n "$c2" ] &&
	[ "${c1% *}" != "${c2% *}" ] && [ "${c1#* }" != "${c2#* }" ]

# A port taken by someone else: the first ports handed to the daemons are
# one held by a listening socket; slurm_start must notice and take others.
"$PYTHON" -c 'import socket, sys, time
s = socket.socket()
s.bind(("0.0.0.0", 0))
s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(120)' >"$WORK/held" &
holder=$!
_slurm_wait 10 test -s "$WORK/held" || die "no port held"
held=$(cat "$WORK/held")
eval "_slurm_real_ports() $(declare -f _slurm_free_ports | tail -n +2)"
_slurm_free_ports() {
	# a file, not a variable: this runs in a command substitution
	[ -e "$WORK/held.given" ] && { _slurm_real_ports "$@"; return; }
	: >"$WORK/held.given"
	echo "$held $held"
}
slurm_start >"$WORK/start.log" 2>&1
cat "$WORK/start.log"
check "port $held in use: slurm_start took other ports" \
	grep -q 'attempt 1), trying other ports' "$WORK/start.log"
kill "$holder"
wait "$holder" 2>/dev/null

# That cluster loses its slurmd while a job runs: slurm_stop still ends
# the job's processes (by pid) and every daemon.
cd "$WORK" || die "cd $WORK"
printf '#!/bin/sh\necho $$ >job.pid\nexec sleep 600\n' >long.sh
sbatch -o long.log long.sh >/dev/null || fail "sbatch long.sh"
_slurm_wait 30 test -s job.pid || fail "the long job did not start"
job=$(cat job.pid 2>/dev/null)
daemons=$SLURM_PIDS
kill -KILL "$SLURM_SLURMD_PID"
slurm_stop
# processes take their time to go on a loaded machine: up to 30 s
for _ in $(seq 150); do
	left=
	for p in $daemons $job; do
		[ -e "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null &&
			left="$left $p"
	done
	[ -z "$left" ] && break
	sleep 0.2
done
check "after slurmd was killed: no daemon or job process left (${left:-none})" \
	[ -z "$left" ]
check "slurm_stop twice is harmless" slurm_stop
finish
