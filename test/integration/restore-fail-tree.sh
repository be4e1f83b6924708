#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A failed restore of a wide tree kills everything it started, whichever task
# made which (restore.md, "Siblings forked side by side": a child forks some
# of its siblings with CLONE_PARENT, so a restore's tasks are created by
# several forkers at once). A root and FOREST-1 children (default 8: the root
# forks four of them, its first child three more, ...), sharing 36 MiB the
# root wrote before its forks (spreading needs 32 MiB kept before the forks),
# are dumped once, then restored:
#   1. made to fail at failure point after failure point (CRIU_LIKE_FAULT=N)
#      until a restore goes through;
#   2. SIGKILLed at step after step (CRIU_LIKE_FAULT_STEP=N) until a restore
#      goes through;
# each every STEP-th (default 3) from a START of 1 to STEP picked at random and
# printed (STEP=1: every one, about 2 minutes).
# After each: every pid of the tree free again within 3 s (no task left by any
# forker), the images byte-identical. At the end a plain restore works: every
# task back, each child the root's child again, in the root's process group,
# ticking without memory errors.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
N=${FOREST:-8}
STEP=${STEP:-3}
START=${START:-$(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % STEP + 1))}
[ "$(id -u)" = 0 ] || { echo "restore-fail-tree: needs root"; exit 77; }
command -v sha256sum >/dev/null || { echo "restore-fail-tree: sha256sum is not installed"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "restore-fail-tree: build first"; exit 1; }

. "$(dirname "$0")/tree-pids.inc"

# no pid of the tree left, 3 s at most
gone() { pids_free_within 300; }

echo "restore-fail-tree: points $START, $((START + STEP)), ... (STEP=$STEP START=$START)"
setsid "$V" forest "$N" 36 >"$tmp/out" 2>&1 </dev/null &
root=$!
i=0
until grep -q "^ready $root" "$tmp/out" 2>/dev/null && [ "$(pgrep -c -g "$root")" = "$N" ]; do
	i=$((i + 1))
	[ $i -le 1000 ] || fail "the victim did not start"
	sleep 0.01
done
pids=$(pgrep -g "$root" | sort -n | tr '\n' ' ')
"$CRIU_LIKE" dump -t "$root" -D "$tmp/img" -o "$tmp/dump.log" >"$tmp/dump.out" 2>&1 ||
	fail "dump of the tree $pids: $(tail -3 "$tmp/dump.out")"
gone || fail "the dumped tree did not go away:$left"
digest() { (cd "$tmp/img" && find . -maxdepth 1 -type f ! -name stats-restore | sort | xargs sha256sum); }
digest >"$tmp/sums"
cp "$tmp/out" "$tmp/out.dumped"

# attempt VAR: restore -d with VAR=N for N = START, START + STEP, ... until one goes through;
# each that fails must leave no task. Sets $tried.
attempt() {
	k=$START tried=0
	while :; do
		rm -f "$tmp/restore.log"
		env "$1=$k" "$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o "$tmp/restore.log" \
			>"$tmp/restore.out" 2>&1
		rc=$?
		[ $rc = 0 ] && break
		gone || fail "$1=$k (exit $rc): tasks left behind:$left"
		digest | cmp -s "$tmp/sums" - || fail "$1=$k: the images changed"
		# the tree's own lines only: neither a restored task's nor criu-like's (a
		# task that failed after installing its fd table wrote its error there)
		cmp -s "$tmp/out" "$tmp/out.dumped" ||
			fail "$1=$k: the tree's output changed: $(tail -1 "$tmp/out")"
		# as dumped again: a restore refuses a file whose size changed
		cat "$tmp/out.dumped" >"$tmp/out"
		tried=$((tried + 1))
		k=$((k + STEP))
		[ $k -le 2000 ] || fail "$1: no restore went through in 2000 points"
	done
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	gone || fail "$1: the restored tree did not go away:$left"
	cat "$tmp/out.dumped" >"$tmp/out"
}

attempt CRIU_LIKE_FAULT
points=$tried
attempt CRIU_LIKE_FAULT_STEP
steps=$tried
[ "$points" -ge 1 ] && [ "$steps" -ge 1 ] || fail "no failure point or step ($points, $steps)"

"$CRIU_LIKE" restore -D "$tmp/img" -d -o "$tmp/restore.log" >"$tmp/restore.out" 2>&1 ||
	fail "final restore: $(tail -3 "$tmp/restore.out")"
for p in $pids; do
	[ -d "/proc/$p" ] || fail "final restore: $p is missing"
	[ "$p" = "$root" ] && continue
	pp=$(sed -n 's/^PPid:\t//p' "/proc/$p/status")
	[ "$pp" = "$root" ] || fail "final restore: $p is the child of $pp, not of $root"
	[ "$(ps -o pgid= -p "$p" | tr -d ' ')" = "$root" ] || fail "final restore: $p left group $root"
done
# every process ticks again (a line newer than the dump's last), no memory error
for i in $(seq 0 $((N - 1))); do
	was=$(grep -c "^p$i tick" "$tmp/out.dumped")
	j=0
	until [ "$(grep -c "^p$i tick" "$tmp/out")" -gt "$was" ]; do
		j=$((j + 1))
		[ $j -le 500 ] || fail "final restore: p$i does not tick"
		sleep 0.01
	done
done
grep "^p[0-9]* tick" "$tmp/out" | awk '$5 != 0 { bad = 1 } END { exit bad }' ||
	fail "final restore: memory errors: $(grep "^p[0-9]* tick" "$tmp/out" | awk '$5 != 0' | tail -1)"
echo "restore-fail-tree: $points failure points and $steps kill points of a $N-process restore left no task; the final restore runs, parentage kept"
