#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Lazy restore with the pages on a remote page server (Documentation/
# lazy-pages.md, "From a page server"): a victim is pre-dumped, then dumped
# on top of it; `page-server --lazy-pages` serves that directory (and its
# parent) on 127.0.0.1, `lazy-pages --page-server` takes the pages from it
# for `restore --lazy-pages`. The memory comes back byte for byte, the data
# having gone through the server. Then the server is killed while pages are
# still lazy: the daemon cannot read them, kills the tree and fails; no
# daemon, guard or mirror directory is left. No wait is unbounded; each step
# prints a progress line.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
say() { echo "lazy-remote: $*"; }
[ "$(id -u)" = 0 ] || { echo "lazy-remote: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "lazy-remote: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	pkill -KILL -P $$ 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

. "$(dirname "$0")/victim-steps.inc"

# $1: pid, $2: whose; no process holds it within 10 s (a SIGKILLed victim takes a
# while to go under load; restoring it before then fails with its pid in use)
pid_free() {
	n=0
	while [ -d /proc/$1 ]; do
		[ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" = Z ] && wait $1 2>/dev/null
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: pid $1 ($2) still in use after 10 s"; exit 1; }
		sleep 0.01
	done
}

# child $1 ($2: what) exits within $3 s, never a plain `wait`; its status in rc
wait_child() {
	n=0
	while [ -d /proc/$1 ] && [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		if [ $n -gt $(($3 * 10)) ]; then
			echo "FAIL: $2 ($1) still runs after $3 s"
			ps -eo pid,ppid,stat,wchan:32,cmd | grep -E 'criu-like|predump-victim' |
				grep -v grep
			exit 1
		fi
		sleep 0.1
	done
	wait $1
	rc=$?
}

# a free port of 127.0.0.1 (the kernel's pick)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# its 16 MiB MADV_HUGEPAGE: the daemon collapses them once they are in
PREDUMP_VICTIM_THP=1 setsid "$V" 16 "$tmp/mem" >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_line ready
mkdir "$tmp/p1" "$tmp/d2"
"$C" pre-dump -t $vp -D "$tmp/p1" -o pd.log || { echo "FAIL: pre-dump"; exit 1; }
sleep 0.2
kill -USR2 $vp
wait_line quiet
"$C" dump -t $vp -D "$tmp/d2" --prev-images-dir ../p1 -o d.log || { echo "FAIL: dump"; exit 1; }
victim=$vp

# $1: prefetch delay; starts the server ($sp) and the daemon ($lp), restores
lazy_remote() {
	"$C" page-server --lazy-pages -D "$tmp/d2" --address 127.0.0.1 --port $port -v4 \
		-o ps.log &
	sp=$!
	n=0
	until grep -q "listening on" "$tmp/d2/ps.log" 2>/dev/null; do
		n=$((n + 1)); [ $n -le 500 ] || { echo "FAIL: no page server"; exit 1; }; sleep 0.01
	done
	CRIU_LIKE_LAZY_PREFETCH_DELAY_MS=$1 "$C" lazy-pages --page-server --address 127.0.0.1 \
		--port $port -D "$tmp/d2" -v4 --timeout 30 -o lazy.log 2>/dev/null &
	lp=$!
	pid_free $victim "the victim"
	"$C" restore --lazy-pages -D "$tmp/d2" -d -v4 -o r.log || { echo "FAIL: restore"; exit 1; }
	vp=$victim
	# this daemon's guard (other lazy restores may run on the machine)
	gd=$(ps -eo pid,ppid,comm | awk -v p=$lp '$2 == p && $3 == "criu-like-lzgd" { print $1 }')
}

say "1. every page through the page server"
lazy_remote 0
wait_child $lp "lazy-pages --page-server" 60
[ $rc = 0 ] || { echo "FAIL: lazy-pages --page-server exited $rc"; fail=1; }
wait_child $sp "page-server --lazy-pages" 30
[ $rc = 0 ] || { echo "FAIL: page-server --lazy-pages exited $rc"; fail=1; }
grep -q "bytes of pages served" "$tmp/d2/ps.log" ||
	{ echo "FAIL: the page server served no pages"; fail=1; }
kill -USR1 $vp
wait_line saved
cmp -s "$tmp/mem.A" "$tmp/mem.B" ||
	{ echo "FAIL: memory differs after a lazy restore from a page server"; fail=1; }
# the daemon collapsed the MADV_HUGEPAGE stretches (from the mirror's mm image) before it exited
thp=$(awk '/^AnonHugePages:/ { print $2 }' /proc/$vp/smaps_rollup)
grep -q "stretches collapsed into huge pages" "$tmp/d2/lazy.log" && [ "${thp:-0}" -gt 0 ] ||
	{ echo "FAIL: no huge page after a lazy restore from a page server (AnonHugePages ${thp:-?} kB)"; fail=1; }
kill -KILL $vp

say "2. the page server killed while every page is still lazy"
: >"$tmp/d2/ps.log"
printf 'ready\nquiet\n' >"$tmp/out" # as the dump saw it
lazy_remote 500
kill -KILL $sp
n=0
while kill -0 $vp 2>/dev/null && [ "$(awk '{print $3}' /proc/$vp/stat 2>/dev/null)" != Z ]; do
	n=$((n + 1)); [ $n -le 500 ] || { echo "FAIL: the victim runs on without its pages"; fail=1; break; }
	sleep 0.01
done
wait_child $lp "lazy-pages without its page server" 30
[ $rc != 0 ] || { echo "FAIL: lazy-pages exited 0 without its page server"; fail=1; }
grep -q "killing the lazily restored tree" "$tmp/d2/lazy.log" ||
	{ echo "FAIL: the daemon did not say it killed the tree"; fail=1; }
sleep 0.2
[ -z "$gd" ] || [ ! -d /proc/$gd ] || { echo "FAIL: the guard $gd is left"; fail=1; }
ls -d "$tmp"/d2/lazy-pages-mirror.* 2>/dev/null && { echo "FAIL: a mirror directory is left"; fail=1; }
vp=

[ $fail = 0 ] && echo "lazy-remote: ok"
exit $fail
