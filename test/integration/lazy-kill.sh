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
# pre-dump, whose parent's pages come through the chain.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
[ "$(id -u)" = 0 ] || { echo "lazy-kill: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "lazy-kill: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
lp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	[ -n "$lp" ] && kill -KILL "$lp" 2>/dev/null
	pkill -KILL -P $$ 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

wait_line() {
	n=0
	until grep -q "^$1" "$tmp/out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: no '$1' from the victim"; exit 1; }
		sleep 0.01
	done
}

# $1: pid; gone (or a zombie nobody reaped yet) within 5 s
gone() {
	n=0
	while [ -d /proc/$1 ] && [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		[ $n -le 500 ] || return 1
		sleep 0.01
	done
	return 0
}

setsid "$V" 64 "$tmp/mem" >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_line ready
kill -USR2 $vp
wait_line quiet
mkdir "$tmp/img"
"$C" dump -t $vp -D "$tmp/img" -v4 -o d.log || { echo "FAIL: dump"; exit 1; }
victim=$vp
vp=

# start the daemon (prefetch delay $1 ms, env $2), restore lazily; $lp the daemon, $vp the victim
lazy_restore() {
	rm -f "$tmp/img/lazy.log"
	env CRIU_LIKE_LAZY_PREFETCH_DELAY_MS=$1 $2 "$C" lazy-pages -D "$tmp/img" -v4 \
		-o lazy.log 2>"$tmp/lazy.err" &
	lp=$!
	if ! "$C" restore --lazy-pages -D "$tmp/img" -d -v4 -o r.log 2>/dev/null; then
		# a source failing at once may kill the tree while the restore resumes it:
		# the restore then fails (and kills what it made), which is right too
		[ "${3:-}" = may-fail ] || { echo "FAIL: restore --lazy-pages"; exit 1; }
	fi
	vp=$victim
	[ "${3:-}" = may-fail ] || kill -0 $vp 2>/dev/null ||
		{ echo "FAIL: no victim after the restore"; exit 1; }
	sleep 0.2
}

check_left() {
	gone $vp || { echo "FAIL: $1: the victim $vp still runs"; fail=1; }
	kill -KILL $vp 2>/dev/null
	wait $lp 2>/dev/null
	rc=$?
	sleep 0.2
	left=$(ps -eo comm | grep -c '^criu-like-lzgd$')
	[ "$left" = 0 ] || { echo "FAIL: $1: $left lazy-pages guards left"; fail=1; }
	kill -0 $lp 2>/dev/null && { echo "FAIL: $1: the daemon is left"; fail=1; }
	lp=
	vp=
}

# 1. the daemon dies
lazy_restore 60000 ""
kill -0 $vp || { echo "FAIL: the victim died on lazy pages"; fail=1; }
kill -KILL $lp
check_left "daemon killed"
grep -q "the daemon is gone, 1 lazily restored task(s) killed" "$tmp/lazy.err" ||
	{ echo "FAIL: the guard did not say it killed the tree"; cat "$tmp/lazy.err"; fail=1; }

# 2. the guard dies
lazy_restore 60000 ""
g=$(ps -eo pid,comm | awk '$2 == "criu-like-lzgd" { print $1 }')
[ -n "$g" ] || { echo "FAIL: no guard (criu-like-lzgd) while the daemon serves"; fail=1; }
[ -n "$g" ] && kill -KILL $g
check_left "guard killed"
[ "$rc" != 0 ] || { echo "FAIL: the daemon exited 0 after its guard died"; fail=1; }
grep -q "the guard died: killing the lazily restored tree" "$tmp/img/lazy.log" ||
	{ echo "FAIL: the daemon did not say it killed the tree"; fail=1; }

# 3. the images cannot be read: the 12th read of page data (a background chunk) fails
lazy_restore 0 "CRIU_LIKE_FAULT=list"
wait $lp || { echo "FAIL: lazy-pages (counting its fault points)"; fail=1; }
kill -KILL $vp
pt=$(sed -n 's/.*fault injection: point \([0-9]*\): pages-[0-9]*\.img: read.*/\1/p' \
	"$tmp/img/lazy.log" | sed -n 12p)
[ -n "$pt" ] || { echo "FAIL: no 12 reads of page data in the daemon"; exit 1; }
lazy_restore 0 "CRIU_LIKE_FAULT=$pt" may-fail
check_left "read failure"
[ "$rc" != 0 ] || { echo "FAIL: the daemon exited 0 after a read failed"; fail=1; }
grep -q "killing the lazily restored tree" "$tmp/img/lazy.log" ||
	{ echo "FAIL: the daemon did not say it killed the tree"; fail=1; }

# 4. undisturbed: every page comes in, the memory as it was
"$C" lazy-pages -D "$tmp/img" -v4 -o lazy.log &
lp=$!
"$C" restore --lazy-pages -D "$tmp/img" -d -v4 -o r.log || { echo "FAIL: restore 4"; exit 1; }
vp=$victim
wait $lp || { echo "FAIL: lazy-pages exited $?"; fail=1; }
lp=
kill -USR1 $vp
wait_line saved
cmp -s "$tmp/mem.A" "$tmp/mem.B" || { echo "FAIL: memory differs after a lazy restore"; fail=1; }
kill -KILL $vp
vp=

# 5. through a pre-dump chain: the pages of the parent image are served from it
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
"$C" lazy-pages -D "$tmp/d2" -v4 -o lazy.log &
lp=$!
"$C" restore --lazy-pages -D "$tmp/d2" -d -v4 -o r.log || { echo "FAIL: restore 5"; exit 1; }
wait $lp || { echo "FAIL: lazy-pages on a chain exited $?"; fail=1; }
lp=
kill -USR1 $vp
n=0
until [ "$(grep -c '^saved' "$tmp/out")" -ge 1 ]; do
	n=$((n + 1)); [ $n -le 1000 ] || { echo "FAIL: no 'saved'"; exit 1; }; sleep 0.01
done
cmp -s "$tmp/mem2.A" "$tmp/mem2.B" ||
	{ echo "FAIL: memory differs after a lazy restore of a chain"; fail=1; }
kill -KILL $vp
vp=

[ $fail = 0 ] && echo "lazy-kill: ok"
exit $fail
