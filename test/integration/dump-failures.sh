#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Every way a dump can fail must end with a clear error, an image directory
# that is not marked complete, and the tree running as before (not traced,
# not stopped, its memory intact, still ticking):
#   1. an fd of a kind not supported yet (a vsock socket)
#   2. an image directory on a read-only file system
#   3. a full disk (a 1 MiB tmpfs, 32 MiB to save)
#   4. a task of the tree exits during the dump (SIGKILL while memory is drained)
# and a refusal: 5. a session leader outside the tree without --shell-job
# (accepted with it).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "dump-failures: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "dump-failures: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
pids=
cleanup() {
	[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	umount "$tmp/ro" "$tmp/full" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

# start NAME ARGS...: run the victim with its output in $tmp/NAME, set $vp.
start() {
	name=$1
	shift
	# Its own session: the dump must not refuse it for its session leader.
	setsid "$V" "$@" >"$tmp/$name" 2>&1 </dev/null &
	vp=$!
	pids="$pids $vp"
	n=0
	until grep -q '^ready' "$tmp/$name" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: $name victim did not start"; exit 1; }
		sleep 0.01
	done
}

last_tick() {
	grep "^${2:-}tick" "$tmp/$1" | tail -1 | cut -d' ' -f"${3:-2}"
}

# intact NAME PID [PREFIX]: not traced, not stopped, ticks advance, no errors.
intact() {
	st=$(awk '/^State:/ { print $2 } /^TracerPid:/ { print $2 }' /proc/$2/status | tr '\n' ' ')
	case "$st" in
	"S 0 " | "R 0 " | "D 0 ") ;; # D: a free task waiting on I/O, as under load
	*) echo "FAIL: $1: pid $2 is not running free after the failed dump (state/tracer: $st)"
	   fail=1
	   return ;;
	esac
	f=2
	[ -n "${3:-}" ] && f=3
	a=$(last_tick "$1" "${3:-}" $f)
	sleep 0.3
	b=$(last_tick "$1" "${3:-}" $f)
	e=$(grep "^${3:-}tick" "$tmp/$1" | tail -1 | awk '{ print $NF }')
	if [ -z "$a" ] || [ "$a" = "$b" ] || [ "$e" != 0 ]; then
		echo "FAIL: $1: pid $2 does not tick on intact (ticks $a -> $b, errors $e)"
		fail=1
	fi
}

# not_complete DIR: the inventory, if any, must not say completed.
not_complete() {
	[ -e "$1/inventory.img" ] || return 0
	if "$CRIU_LIKE" decode "$1/inventory.img" | grep -q '"completed": *true'; then
		echo "FAIL: $1 is marked complete after a failed dump"
		fail=1
	fi
}

# expect_failure NAME PATTERN CMD...: CMD must fail and print PATTERN.
expect_failure() {
	name=$1 pat=$2
	shift 2
	if "$@" >"$tmp/$name.out" 2>&1; then
		echo "FAIL: $name: the dump succeeded"
		fail=1
	elif ! grep -q "$pat" "$tmp/$name.out"; then
		echo "FAIL: $name: no message matching '$pat':"
		cat "$tmp/$name.out"
		fail=1
	else
		echo "ok: $name: $(grep "$pat" "$tmp/$name.out" | head -1)"
	fi
}

# 1. unsupported fd
start sock socket
expect_failure socket "pid $vp fd [0-9]*: socket:.*(vsock socket) is not supported" \
	"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img-sock"
not_complete "$tmp/img-sock"
intact sock "$vp"

# 2. read-only image directory, 3. a full disk: small tmpfs mounts of our own
# (criu-like must stay in the tree's mount namespace: one of its own is refused)
start mem mem 32
mkdir -p "$tmp/ro" "$tmp/full"
mount -t tmpfs -o ro,size=1m none "$tmp/ro" && mount -t tmpfs -o size=1m none "$tmp/full" ||
	{ echo "dump-failures: cannot mount a tmpfs"; exit 1; }
expect_failure read-only "not writable\|Read-only" "$CRIU_LIKE" dump -t $vp -D "$tmp/ro"
intact mem "$vp"
expect_failure disk-full "No space left" sh -c \
	"'$CRIU_LIKE' dump -t $vp -D '$tmp/full' &&
	 exit 0; r=\$?; '$CRIU_LIKE' decode '$tmp/full/inventory.img' | grep -q '\"completed\": *true' &&
	 echo 'marked complete'; exit \$r"
grep -q 'marked complete' "$tmp/disk-full.out" && { echo "FAIL: disk-full: marked complete"; fail=1; }
intact mem "$vp"

# 4. the child of the tree is killed while its 512 MiB are drained
start tree mem 512 tree
child=$(sed -n 's/^ready [0-9]* child \([0-9]*\)/\1/p' "$tmp/tree")
pids="$pids $child"
until grep -q '^child tick' "$tmp/tree"; do sleep 0.05; done
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img-exit" -v4 -o "$tmp/exit.log" >"$tmp/exit.out" 2>&1 &
dp=$!
# Stop the dumper as it starts on the child (its 512 MiB take far longer than
# this), kill the child, let the dumper go on.
n=0
until grep -q "pid $child: dumping" "$tmp/exit.log" 2>/dev/null || [ $n -gt 1000 ]; do
	n=$((n + 1))
	sleep 0.001
done
kill -STOP $dp
grep -q "task $child cured" "$tmp/exit.log" && echo "exit: the dumper was too fast to catch"
kill -KILL "$child"
kill -CONT $dp
if wait $dp; then
	echo "FAIL: exit: the dump succeeded although pid $child died during it"
	fail=1
elif ! grep -q "$child" "$tmp/exit.out"; then
	echo "FAIL: exit: the error does not name pid $child:"
	cat "$tmp/exit.out"
	fail=1
else
	echo "ok: exit: $(grep "$child" "$tmp/exit.out" | head -1)"
fi
not_complete "$tmp/img-exit"
intact tree "$vp"

# 5. a session leader outside the tree (no setsid): refused unless --shell-job
"$V" mem 4 >"$tmp/job" 2>&1 </dev/null &
jp=$!
pids="$pids $jp"
until grep -q '^ready' "$tmp/job" 2>/dev/null; do sleep 0.01; done
expect_failure shell-job "pid $jp: its session leader [0-9]* is outside the dumped tree: dump with --shell-job" \
	"$CRIU_LIKE" dump -t "$jp" -D "$tmp/img-job"
not_complete "$tmp/img-job"
intact job "$jp"
if ! "$CRIU_LIKE" dump -t "$jp" -D "$tmp/img-job" -R --shell-job >"$tmp/job.out" 2>&1; then
	echo "FAIL: shell-job: dump -R --shell-job failed:"
	cat "$tmp/job.out"
	fail=1
fi
intact job "$jp"

[ $fail = 0 ] && echo "dump-failures: 4 failure modes and a refusal, tree intact after each"
exit $fail
