#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A lazily restored tree whose pages vanish is killed, never left running
# with holes in its memory (Documentation/lazy-pages.md, "When the pages
# vanish"). The victim writes at random over 64 MiB; restored with
# --lazy-pages and a daemon whose background copy waits a minute, it runs on
# faults only. Then, each time on a fresh restore:
#  1. the daemon is killed with SIGKILL: its guard kills the tree;
#  2. the guard is killed with SIGKILL: the daemon kills the tree and fails;
#  3. a read of the images fails in the daemon (fault injection): it kills
#     the tree and fails.
# Afterwards neither the daemon, nor its guard, nor the victim is left. A
# last restore with the daemon left alone runs to the end: every page in,
# the memory byte for byte what it was; and so does one of a dump on a
# pre-dump, whose parent's pages come through the chain. A restore that
# fails before it connects (the pid in use) leaves no daemon waiting for it:
# it tells the daemon, which ends at once (not at its --timeout).
#
# No wait here is unbounded (a bound hit is a FAIL naming what was waited
# for), and each step prints a progress line, so that a run killed by the
# harness's timeout shows where it stopped.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
say() { echo "lazy-kill: $*"; }
[ "$(id -u)" = 0 ] || { echo "lazy-kill: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "lazy-kill: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
lp=
gd=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	[ -n "$lp" ] && kill -KILL "$lp" 2>/dev/null
	pkill -KILL -P $$ 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

. "$(dirname "$0")/victim-steps.inc"

# $1: pid; gone (or a zombie nobody reaped yet) within 10 s
gone() {
	n=0
	while [ -d /proc/$1 ] && [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		[ $n -le 1000 ] || return 1
		sleep 0.01
	done
	return 0
}

# $1: pid, $2: whose; no process (not even a zombie) holds it within 10 s. A
# SIGKILLed victim of 64 MiB takes a while to go under load: restoring it
# again before then fails with its pid in use, before the daemon is reached.
pid_free() {
	n=0
	while [ -d /proc/$1 ]; do
		# a zombie child of this shell (the dumped victim) goes with a wait
		[ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" = Z ] && wait $1 2>/dev/null
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: pid $1 ($2) still in use after 10 s"; exit 1; }
		sleep 0.01
	done
}

# The daemon $lp exits within $1 s ($2: what it does, $3: its log): a bound,
# never a plain `wait`. Its exit status in rc.
wait_daemon() {
	n=0
	while [ -d /proc/$lp ] && [ "$(awk '{print $3}' /proc/$lp/stat 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		if [ $n -gt $(($1 * 10)) ]; then
			echo "FAIL: the lazy-pages daemon $lp still runs after $1 s ($2)"
			ps -eo pid,ppid,stat,wchan:32,cmd | grep -E 'criu-like|predump-victim' |
				grep -v grep
			tail -n 20 "$3"
			exit 1
		fi
		sleep 0.1
	done
	wait $lp
	rc=$?
}

say "0. a victim of 64 MiB, dumped"
setsid "$V" 64 "$tmp/mem" >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_line ready
kill -USR2 $vp
wait_line quiet
mkdir "$tmp/img"
"$C" dump -t $vp -D "$tmp/img" -v4 -o d.log || { echo "FAIL: dump"; exit 1; }
victim=$vp
vp=

# start the daemon (prefetch delay $1 ms, env $2), restore lazily; $lp the daemon, $vp the
# victim, $gd the guard
lazy_restore() {
	pid_free $victim "the victim, killed before"
	rm -f "$tmp/img/lazy.log"
	env CRIU_LIKE_LAZY_PREFETCH_DELAY_MS=$1 $2 "$C" lazy-pages -D "$tmp/img" -v4 \
		--timeout 30 -o lazy.log 2>"$tmp/lazy.err" &
	lp=$!
	if ! "$C" restore --lazy-pages -D "$tmp/img" -d -v4 -o r.log 2>/dev/null; then
		# a source failing at once may kill the tree while the restore resumes it:
		# the restore then fails (and kills what it made), which is right too
		[ "${3:-}" = may-fail ] || { echo "FAIL: restore --lazy-pages"; exit 1; }
	fi
	vp=$victim
	[ "${3:-}" = may-fail ] || kill -0 $vp 2>/dev/null ||
		{ echo "FAIL: no victim after the restore"; exit 1; }
	# this daemon's guard (other lazy restores may run on the machine)
	gd=$(ps -eo pid,ppid,comm | awk -v p=$lp '$2 == p && $3 == "criu-like-lzgd" { print $1 }')
	sleep 0.2
}

check_left() {
	gone $vp || { echo "FAIL: $1: the victim $vp still runs"; fail=1; }
	kill -KILL $vp 2>/dev/null
	wait_daemon 30 "$1" "$tmp/img/lazy.log"
	[ -z "$gd" ] || gone $gd || { echo "FAIL: $1: its guard $gd is left"; fail=1; }
	lp=
	vp=
	gd=
}

say "1. the daemon killed under a lazily restored tree"
lazy_restore 60000 ""
kill -0 $vp || { echo "FAIL: the victim died on lazy pages"; fail=1; }
kill -KILL $lp
check_left "daemon killed"
grep -q "the daemon is gone, 1 lazily restored task(s) killed" "$tmp/lazy.err" ||
	{ echo "FAIL: the guard did not say it killed the tree"; cat "$tmp/lazy.err"; fail=1; }

say "2. the guard killed"
lazy_restore 60000 ""
[ -n "$gd" ] || { echo "FAIL: no guard (criu-like-lzgd) while the daemon serves"; fail=1; }
[ -n "$gd" ] && kill -KILL $gd
check_left "guard killed"
[ "$rc" != 0 ] || { echo "FAIL: the daemon exited 0 after its guard died"; fail=1; }
grep -q "the guard died: killing the lazily restored tree" "$tmp/img/lazy.log" ||
	{ echo "FAIL: the daemon did not say it killed the tree"; fail=1; }

say "3. a read of the images fails (fault injection)"
lazy_restore 0 "CRIU_LIKE_FAULT=list"
wait_daemon 60 "counting its fault points" "$tmp/img/lazy.log"
[ $rc = 0 ] || { echo "FAIL: lazy-pages (counting its fault points) exited $rc"; fail=1; }
lp=
kill -KILL $vp
pt=$(sed -n 's/.*fault injection: point \([0-9]*\): pages-[0-9]*\.img: read.*/\1/p' \
	"$tmp/img/lazy.log" | sed -n 12p)
[ -n "$pt" ] || { echo "FAIL: no 12 reads of page data in the daemon"; exit 1; }
lazy_restore 0 "CRIU_LIKE_FAULT=$pt" may-fail
check_left "read failure"
[ "$rc" != 0 ] || { echo "FAIL: the daemon exited 0 after a read failed"; fail=1; }
grep -q "bytes to serve" "$tmp/img/lazy.log" ||
	{ echo "FAIL: read failure: the restore did not reach the daemon"; tail -n 5 "$tmp/img/r.log"; fail=1; }
grep -q "killing the lazily restored tree" "$tmp/img/lazy.log" ||
	{ echo "FAIL: the daemon did not say it killed the tree"; fail=1; }

say "4. undisturbed: every page in"
pid_free $victim "the victim, killed before"
"$C" lazy-pages -D "$tmp/img" -v4 --timeout 30 -o lazy.log &
lp=$!
"$C" restore --lazy-pages -D "$tmp/img" -d -v4 -o r.log || { echo "FAIL: restore 4"; exit 1; }
vp=$victim
wait_daemon 60 "serving every page" "$tmp/img/lazy.log"
[ $rc = 0 ] || { echo "FAIL: lazy-pages exited $rc"; fail=1; }
lp=
kill -USR1 $vp
wait_line saved
cmp -s "$tmp/mem.A" "$tmp/mem.B" || { echo "FAIL: memory differs after a lazy restore"; fail=1; }

say "4b. a restore failing before it connects (its pid in use): it tells the daemon"
# the daemon started after the restore failed: the restore waits for its socket
"$C" restore --lazy-pages -D "$tmp/img" -d -o r-inuse.log 2>/dev/null &
rp=$!
sleep 0.5
"$C" lazy-pages -D "$tmp/img" -v4 --timeout 30 -o lazy-alone.log 2>/dev/null &
lp=$!
wait $rp && { echo "FAIL: a restore over a running tree succeeded"; fail=1; }
wait_daemon 20 "the restore failed" "$tmp/img/lazy-alone.log"
lp=
[ $rc != 0 ] || { echo "FAIL: the daemon exited 0 though no restore came"; fail=1; }
grep -q "the restore failed before it connected" "$tmp/img/lazy-alone.log" ||
	{ echo "FAIL: the daemon was not told of the failed restore"; fail=1; }
kill -KILL $vp
vp=

say "5. through a pre-dump chain"
: >"$tmp/out"
setsid "$V" 16 "$tmp/mem2" >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_line ready
mkdir "$tmp/p1" "$tmp/d2"
"$C" pre-dump -t $vp -D "$tmp/p1" -o pd.log || { echo "FAIL: pre-dump"; exit 1; }
sleep 0.2
kill -USR2 $vp
wait_line quiet
"$C" dump -t $vp -D "$tmp/d2" --prev-images-dir ../p1 -o d.log || { echo "FAIL: dump 2"; exit 1; }
victim=$vp
"$C" decode "$tmp/d2/pagemap-$victim.img" | grep -q '"flags": 2' ||
	{ echo "FAIL: the dump on the pre-dump points to no parent page"; fail=1; }
pid_free $victim "the pre-dumped victim"
"$C" lazy-pages -D "$tmp/d2" -v4 --timeout 30 -o lazy.log &
lp=$!
"$C" restore --lazy-pages -D "$tmp/d2" -d -v4 -o r.log || { echo "FAIL: restore 5"; exit 1; }
wait_daemon 60 "serving a chain" "$tmp/d2/lazy.log"
[ $rc = 0 ] || { echo "FAIL: lazy-pages on a chain exited $rc"; fail=1; }
lp=
kill -USR1 $vp
wait_line saved
cmp -s "$tmp/mem2.A" "$tmp/mem2.B" ||
	{ echo "FAIL: memory differs after a lazy restore of a chain"; fail=1; }
kill -KILL $vp
vp=

[ $fail = 0 ] && echo "lazy-kill: ok"
exit $fail
