#!/bin/bash
# SPDX-License-Identifier: MIT
# Sharded conversion as a Slurm job array on a private single-node cluster
# (tests/helpers/slurm.sh): one array task per shard (--shard taken from
# SLURM_ARRAY_TASK_ID), then an assemble job that waits for the whole array
# (--dependency=afterok); the layout is byte-identical to a single run.
# An array with a failing task never runs the assemble job.
set -u
. "$(dirname "$0")/common.sh"
. "$top_srcdir/tests/helpers/slurm.sh"
shard_setup

SRC=$WORK/src
DST=$WORK/dst
N=$SHARDS
shard_layout "$SRC" >"$WORK/umoci.log" 2>&1 ||
	die "umoci could not build the layout: $(tail -n 3 "$WORK/umoci.log")"
reference "$SRC" "$WORK/single"

slurm_start
cd "$WORK" || die "cd $WORK"

# The job scripts as an operator would write them (docs/sharding.md).
cat >shard.sbatch <<EOF
#!/bin/sh
#SBATCH --job-name=imgfs-shard
#SBATCH --cpus-per-task=1
exec "$MKFS" --oci -q --jobs=1 --shard="\$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT" \\
	"\$1" "\$2"
EOF
cat >assemble.sbatch <<EOF
#!/bin/sh
#SBATCH --job-name=imgfs-assemble
exec "$MKFS" --oci -q --assemble "\$1" "\$2"
EOF

# array_then_assemble SRC DST: submit both, wait for the assemble job;
# prints the two job ids.
array_then_assemble() {
	local array asm
	array=$(sbatch --parsable --array=0-$((N - 1)) -o "$WORK/shard.%a.log" \
		shard.sbatch "$1" "$2") || return 1
	asm=$(sbatch --parsable --dependency=afterok:"$array" \
		--kill-on-invalid-dep=yes -o "$WORK/assemble.log" --wait \
		assemble.sbatch "$1" "$2")
	echo "${array%%;*} ${asm%%;*}"
}

if ids=$(array_then_assemble "$SRC" "$DST"); then
	ok "sbatch --array=0-$((N - 1)), then the assemble job (afterok): done"
else
	fail "the assemble job failed: $(cat "$WORK/assemble.log" "$WORK"/shard.*.log)"
fi
read -r array asm <<<"$ids"
states=$(slurm_job_state "$array" | sort)
check "every array task COMPLETED: $(tr "\n" " " <<<"$states")" \
	[ "$(printf '%s\n' "$states" | grep -c ' COMPLETED$')" = "$N" ]
check "the assemble job COMPLETED after them" \
	[ "$(slurm_job_state "$asm")" = "$asm COMPLETED" ]
check_same "$WORK/single" "$DST" "Slurm array + assemble job"
check_whole "$DST" "Slurm array + assemble job"

# A shard that fails (its source blob is unreadable: a missing file) keeps
# the assemble job from running at all.
BROKEN=$WORK/broken
cp -a "$SRC" "$BROKEN"
big=$($UNITS list "$BROKEN" | awk '{ print $2 }' | head -n 1)
rm "$BROKEN/blobs/sha256/${big#sha256:}"
# (sbatch --wait returns 0 for a job cancelled before it ran: ask squeue)
ids=$(array_then_assemble "$BROKEN" "$WORK/dst2" 2>/dev/null)
read -r array asm <<<"$ids"
states=$(slurm_job_state "$array" | sort)
check "an array with a failing shard: a task FAILED: $(tr "\n" " " <<<"$states")" \
	grep -q ' FAILED$' <<<"$states"
check "... the assemble job never ran: $(slurm_job_state "$asm")" \
	[ "$(slurm_job_state "$asm")" = "$asm CANCELLED" ]
check "... and wrote no index.json" [ ! -e "$WORK/dst2/index.json" ]
failed=$(grep -l "${big#sha256:}" "$WORK"/shard.*.log | wc -l)
check "... the failing task's log names the missing blob" [ "$failed" -ge 1 ]
finish
