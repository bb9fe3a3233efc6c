#!/bin/bash
# SPDX-License-Identifier: MIT
# Sharded conversion as a Slurm job array on a private single-node cluster
# (tests/helpers/slurm.sh): one array task per shard (--shard taken from
# SLURM_ARRAY_TASK_ID), then an assemble job that waits for the whole array
# (--dependency=afterok); the layout is byte-identical to a single run.
# An array with a failing task never runs the assemble job; resubmitting
# that task alone, then the assemble job, completes the layout.
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

# The job scripts of docs/sharding.md, as they are there, with the
# mkfs.img under test first on PATH (sbatch passes the environment on).
for f in shard.sbatch assemble.sbatch; do
	"$PYTHON" - "$top_srcdir/docs/sharding.md" "$f" >"$f" <<'EOF' ||
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^`%s`.*?```sh\n(.*?)```" % re.escape(sys.argv[2]), text,
              re.S | re.M)
sys.exit(f"no `{sys.argv[2]}` script") if not m else print(m.group(1), end="")
EOF
		die "docs/sharding.md has no $f script"
done
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexec %s "$@"\n' "$MKFS" >"$WORK/bin/mkfs.img"
chmod 0755 "$WORK/bin/mkfs.img" shard.sbatch assemble.sbatch
export PATH="$WORK/bin:$PATH"

# array_then_assemble SRC DST: submit both, wait for the assemble job;
# prints the two job ids.
array_then_assemble() {
	local array asm
	# one CPU a task (not the script's 2): a small node runs them at once
	array=$(sbatch --parsable --array=0-$((N - 1)) --cpus-per-task=1 \
		-o "$WORK/shard.%a.log" shard.sbatch "$1" "$2") || return 1
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
gone=$($UNITS list "$BROKEN" | awk '{ print $2 }' | head -n 1)
rm "$BROKEN/blobs/sha256/${gone#sha256:}"
# (sbatch --wait returns 0 for a job cancelled before it ran: ask squeue)
ids=$(array_then_assemble "$BROKEN" "$WORK/dst2" 2>/dev/null)
read -r array asm <<<"$ids"
states=$(slurm_job_state "$array" | sort)
check "an array with a failing shard: a task FAILED: $(tr "\n" " " <<<"$states")" \
	grep -q ' FAILED$' <<<"$states"
check "... the assemble job never ran: $(slurm_job_state "$asm")" \
	[ "$(slurm_job_state "$asm")" = "$asm CANCELLED" ]
check "... and wrote no index.json" [ ! -e "$WORK/dst2/index.json" ]
failed=$(grep -l "${gone#sha256:}" "$WORK"/shard.*.log | wc -l)
check "... the failing task's log names the missing blob" [ "$failed" -ge 1 ]

# The blob back, only the failed task again (SHARDS=N: a one-task array),
# then the assemble job: the layout of a single run.
cp "$SRC/blobs/sha256/${gone#sha256:}" "$BROKEN/blobs/sha256/"
task=$(sed -n 's/^[0-9]*_\([0-9]*\) FAILED$/\1/p' <<<"$states" | head -n 1)
if sbatch --wait --array="$task" --cpus-per-task=1 --export=ALL,SHARDS="$N" \
	-o "$WORK/retry.log" shard.sbatch "$BROKEN" "$WORK/dst2" >/dev/null &&
	sbatch --wait -o "$WORK/assemble2.log" assemble.sbatch "$BROKEN" \
		"$WORK/dst2" >/dev/null; then
	ok "task $task resubmitted alone (SHARDS=$N), then the assemble job"
else
	fail "task $task resubmitted: $(cat "$WORK/retry.log" "$WORK/assemble2.log")"
fi
check_same "$WORK/single" "$WORK/dst2" "a failed task resubmitted"
finish
