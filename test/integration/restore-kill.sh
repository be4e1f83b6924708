#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The restorer SIGKILLed before the tree resumes (Documentation/restore.md, "When
# criu-like dies"). A tree of 3 processes (sh, dump-victim mem and its child,
# with memory the victim checks) is dumped once, then restored again and again:
#   1. killed at fault point after fault point (CRIU_LIKE_FAULT_STEP=N: the
#      fork, the memory, the barrier, the steps of the ptrace-driven resume):
#      1 to 8, then one in RESTORE_KILL_STRIDE (default 5, from a random
#      offset), until a restore goes through (scripts/kill-restore.sh walks
#      them all);
#   2. RESTORE_KILL_TRIALS (default 8) times after a random delay.
# After each kill: every pid of the tree free again within 3 s, the image
# directory byte-identical (sha256 of every file), and the output file
# unchanged (no restored task ran an instruction of its own). A random kill
# that lands after the resume leaves the whole tree running instead: every
# task alive, untraced, ticking. At the end a plain restore works and the
# counters go on from the dump without memory errors.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
TRIALS=${RESTORE_KILL_TRIALS:-8}
STRIDE=${RESTORE_KILL_STRIDE:-5}
[ "$(id -u)" = 0 ] || { echo "restore-kill: needs root"; exit 77; }
command -v setsid >/dev/null || { echo "restore-kill: setsid is not installed"; exit 77; }
command -v sha256sum >/dev/null || { echo "restore-kill: sha256sum is not installed"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "restore-kill: build first"; exit 1; }

. "$(dirname "$0")/tree-pids.inc"

# Every pid of the tree gone; 3 s at most.
all_free() { pids_free_within 300; }

# Every pid of the tree alive, running or sleeping, untraced.
all_running() {
	for p in $pids; do
		st=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$p/status" 2>/dev/null)
		tr=$(sed -n 's/^TracerPid:\t//p' "/proc/$p/status" 2>/dev/null)
		{ [ "$st" = S ] || [ "$st" = R ]; } && [ "$tr" = 0 ] || return 1
	done
}

last_tick() { grep "^$1tick" "$tmp/out" | tail -1 | cut -d' ' -f"$2"; }

# ticking: both victims print new ticks (5 s at most), without memory errors.
ticking() {
	a=$(last_tick "" 2) c=$(last_tick "child " 3) n=0
	while [ "$(last_tick "" 2)" = "$a" ] || [ "$(last_tick "child " 3)" = "$c" ]; do
		n=$((n + 1))
		[ $n -le 500 ] || return 1
		sleep 0.01
	done
	[ "$(last_tick "child " 5)" = 0 ]
}

# The tree: sh (session leader) -> dump-victim mem 16 tree -> its child.
setsid sh -c "'$V' mem 16 tree; echo end" </dev/null >"$tmp/out" 2>&1 &
sp=$!
n=0
until grep -q '^child tick' "$tmp/out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 500 ] || fail "the victim did not start"
	sleep 0.01
done
vp=$(sed -n 's/^ready \([0-9]*\) child .*/\1/p' "$tmp/out")
cp=$(sed -n 's/^ready [0-9]* child \([0-9]*\)/\1/p' "$tmp/out")
pids="$sp $vp $cp"
"$CRIU_LIKE" dump -t "$sp" -D "$tmp/img" -o "$tmp/dump.log" >"$tmp/dump.out" 2>&1 ||
	fail "dump of the tree $pids: $(tail -3 "$tmp/dump.out")"
wait "$sp" 2>/dev/null
all_free || fail "the dumped tree did not go away"
# every file but stats-restore, which a restore writes once the tree runs (CRIU's name and place)
sums() { (cd "$tmp/img" && find . -maxdepth 1 -type f ! -name stats-restore | sort | xargs sha256sum); }
sums >"$tmp/sums"
cp "$tmp/out" "$tmp/out.dumped"

# A tree that ran wrote to its output: the file goes back to its dumped
# content (the restore refuses a file whose size changed).
kill_ran() {
	for p in $pids; do kill -KILL "$p"; done
	all_free || fail "$what: the restored tree did not go away"
	cat "$tmp/out.dumped" >"$tmp/out"
}

# restore_killed HOW [ENV]: restore -d, SIGKILLed by a fault point or after a delay;
# sets outcome to "free", "done" (the restore went through) or "running".
restore_killed() {
	how=$1
	shift
	rm -f "$tmp/restore.log"
	env "$@" "$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o "$tmp/restore.log" \
		>"$tmp/restore.out" 2>&1 &
	rp=$!
	case $how in
	delay) sleep "$(printf '0.%03d' "$delay")"; kill -KILL "$rp" 2>/dev/null ;;
	esac
	{ wait "$rp"; } 2>/dev/null
	rc=$?
	if [ $rc = 0 ]; then
		outcome="done"
	elif all_free; then
		outcome=free
	elif all_running; then
		outcome=running
	else
		outcome="stranded (exit $rc):$left"
	fi
	sums | cmp -s "$tmp/sums" - || fail "$what: images changed"
}

# 1. the fault points
step=1 tried=0
while :; do
	what="fault point $step"
	restore_killed step CRIU_LIKE_FAULT_STEP=$step
	[ "$outcome" = "done" ] && break
	[ "$outcome" = free ] || fail "$what: $outcome"
	cmp -s "$tmp/out" "$tmp/out.dumped" || fail "$what: a restored task ran: $(tail -1 "$tmp/out")"
	# the first ones one by one, then one in $STRIDE, from a random offset
	if [ $step -lt 8 ]; then
		step=$((step + 1))
	elif [ $step = 8 ]; then
		step=$((step + 1 + $(od -An -N1 -tu1 /dev/urandom | tr -d ' ') % STRIDE))
	else
		step=$((step + STRIDE))
	fi
	tried=$((tried + 1))
	[ $step -le 1000 ] || fail "more than 1000 fault points"
done
[ $step -ge 8 ] || fail "only $step fault points in the restore"
all_running && ticking || fail "the restore past the last point does not run"
kill_ran

# 2. random delays, over the length of a restore (measured above)
killed=0 ran=0 trial=1
while [ $trial -le "$TRIALS" ]; do
	delay=$(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 300))
	what="kill after $delay ms"
	restore_killed delay
	case $outcome in
	free)
		cmp -s "$tmp/out" "$tmp/out.dumped" || fail "$what: a restored task ran"
		killed=$((killed + 1)) ;;
	"done" | running)
		ticking || fail "$what: the tree runs but does not tick"
		kill_ran
		ran=$((ran + 1)) ;;
	*) fail "$what: $outcome" ;;
	esac
	trial=$((trial + 1))
done

# 3. the same images once more, to the end
what="final restore"
"$CRIU_LIKE" restore -D "$tmp/img" -d -o "$tmp/restore.log" >"$tmp/restore.out" 2>&1 ||
	fail "$what: $(tail -3 "$tmp/restore.out")"
all_running && ticking || fail "$what: the tree does not run on"
echo "restore-kill: $tried fault points (of fewer than $step) killed cleanly; $TRIALS random kills: $killed before the resume, $ran after"
