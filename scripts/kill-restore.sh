#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The long run of test/integration/restore-kill.sh (outside make test): N
# restores (default 1000) of the same 3-process tree, each SIGKILLed, odd
# ones at a random fault point (CRIU_LIKE_FAULT_STEP, 1 to the number of
# points of one restore, measured first), even ones after a random delay over
# the length of a restore. After each kill: every pid free again or (a delay
# past the resume) the whole tree running; the images unchanged; no restored
# task ran before the resume. Prints the number of failures at the end and
# exits non-zero if there was one.
#
#   B=build build/test/zdtm/zdtm-run exec -- sh scripts/kill-restore.sh [N]
# (as root; zdtm-run is the subreaper that reaps the orphans of killed trees)
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
N=${1:-1000}
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "kill-restore: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "kill-restore: build first"; exit 1; }

. "$(dirname "$0")/../test/integration/tree-pids.inc"

all_running() {
	for p in $pids; do
		st=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$p/status" 2>/dev/null)
		tr=$(sed -n 's/^TracerPid:\t//p' "/proc/$p/status" 2>/dev/null)
		{ [ "$st" = S ] || [ "$st" = R ]; } && [ "$tr" = 0 ] || return 1
	done
}

# The restored tree runs its own code: its output grows (3 s at most).
ticking() {
	n=0
	while cmp -s "$tmp/out" "$tmp/out.dumped"; do
		n=$((n + 1))
		[ $n -le 300 ] || return 1
		sleep 0.01
	done
}

kill_tree() {
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	pids_free_within 500
	cat "$tmp/out.dumped" >"$tmp/out"
}

setsid sh -c "'$V' mem 64 tree; echo end" </dev/null >"$tmp/out" 2>&1 &
sp=$!
until grep -q '^child tick' "$tmp/out" 2>/dev/null; do sleep 0.01; done
pids="$sp $(sed -n 's/^ready \([0-9]*\) child \([0-9]*\)/\1 \2/p' "$tmp/out")"
"$CRIU_LIKE" dump -t "$sp" -D "$tmp/img" -o "$tmp/dump.log" >/dev/null 2>&1 ||
	{ echo "kill-restore: the dump failed"; exit 1; }
wait "$sp" 2>/dev/null
pids_free_within 500
# every file but stats-restore, which a restore writes once the tree runs
sums() { (cd "$tmp/img" && find . -maxdepth 1 -type f ! -name stats-restore | sort | xargs sha256sum); }
sums >"$tmp/sums"
cp "$tmp/out" "$tmp/out.dumped"

# The number of fault points and the length of a whole restore.
t0=$(date +%s%N)
"$CRIU_LIKE" restore -D "$tmp/img" -d -o "$tmp/restore.log" >/dev/null 2>&1 ||
	{ echo "kill-restore: the first restore failed"; exit 1; }
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000 + 20))
kill_tree
points=8
while :; do
	CRIU_LIKE_FAULT_STEP=$points "$CRIU_LIKE" restore -D "$tmp/img" -d -o "$tmp/restore.log" \
		>/dev/null 2>&1 && break
	pids_free_within 300 || kill_tree
	points=$((points * 2))
	[ $points -le 4096 ] || { echo "kill-restore: no restore goes through"; exit 1; }
done
kill_tree
echo "kill-restore: $N kills, up to $points fault points, a restore takes ~$ms ms"

failures=0 killed=0 ran=0 i=1
while [ $i -le "$N" ]; do
	r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	if [ $((i % 2)) = 1 ]; then
		how="fault point $((r % points + 1))" d=
		CRIU_LIKE_FAULT_STEP=$((r % points + 1)) "$CRIU_LIKE" restore -D "$tmp/img" -d \
			-o "$tmp/restore.log" >/dev/null 2>&1 &
		rp=$!
	else
		d=$((r % ms))
		how="after $d ms"
		"$CRIU_LIKE" restore -D "$tmp/img" -d -o "$tmp/restore.log" >/dev/null 2>&1 &
		rp=$!
		sleep "$((d / 1000)).$(printf '%03d' $((d % 1000)))"
		kill -KILL "$rp" 2>/dev/null
	fi
	{ wait "$rp"; } 2>/dev/null
	rc=$?
	bad=
	if [ $rc != 0 ] && pids_free_within 100; then
		killed=$((killed + 1))
		cmp -s "$tmp/out" "$tmp/out.dumped" || bad="a restored task ran before the resume"
	elif [ $rc != 0 ] && [ -z "${d:-}" ]; then
		# every fault point is before the detach: a killed restore leaves no task
		bad="exit $rc, tasks left:$left"
		kill_tree
	elif all_running && ticking; then
		ran=$((ran + 1))
		kill_tree
	else
		bad="exit $rc, tasks left, not running:$left"
		kill_tree
	fi
	sums | cmp -s "$tmp/sums" - || bad="$bad; images changed"
	if [ -n "$bad" ]; then
		failures=$((failures + 1))
		echo "kill $i ($how): $bad"
		cat "$tmp/out.dumped" >"$tmp/out"
	fi
	i=$((i + 1))
done
echo "kill-restore: $N kills: $killed before the resume (tree gone), $ran after it (tree running), $failures failures"
[ $failures = 0 ]
