#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# CRIU's lazy dump (Documentation/lazy-pages.md, "A lazy dump"): `dump
# --lazy-pages` writes every image but the private anonymous pages' data,
# keeps the tree frozen and serves those pages from it on 127.0.0.1 to
# `lazy-pages --page-server`, which fills `restore --lazy-pages`. The victim
# runs in a pid namespace of its own, so that its copy is restored (as pid 1
# of a new one) while the source still holds its pids.
#  1. every page served: the restored memory is byte for byte the dumped one,
#     the source tree is gone, every process exits 0;
#  2. the daemon killed while every page is still lazy: its guard kills the
#     restored tree, the source tree resumes (running, its memory intact), the
#     dump fails;
#  2b. the dump killed (SIGKILL) mid-transfer: the daemon sees its source go and
#     kills the restored tree at once, the source tree runs on (as after any
#     killed dump, infect.md);
#  3. the daemon gone before any restore (its --timeout): the source resumes;
#  4. the answer to the daemon's DONE lost (CRIU_LIKE_TEST_LAZY_DROP=answer): the
#     restored tree waits stopped, the daemon asks again, the dump's keeper says the
#     source was killed: the restored tree runs on;
#  5. DONE itself lost (=done in the daemon): the source resumes, leaving no keeper;
#     the restored tree waits stopped while the daemon asks again, unanswered, then
#     is killed;
#  6. on top of a pre-dump (--prev-images-dir): the parent's pages come from its
#     images, those written since from the tree;
#  7. the same through the RPC as runc asks it (lazy_pages, ps, status_fd);
#  8. the combinations that make no sense are refused by name;
#  9. a copy of the images made while the dump serves (their lazy pages are holes):
#     every reader but its daemon refuses it by name (the file, where the dump serves
#     its pages): restore, lazy-pages -D, restore --lazy-pages with a daemon that reads
#     images, page-server --lazy-pages, dump --prev-images-dir, dedup, check-images,
#     lazy-pages --page-server at a page server that serves the copy unawares,
#     restore --lazy-pages with the daemon of another lazy dump;
#     then restore --lazy-pages of the copy with lazy-pages --page-server at the dump.
# No wait is unbounded; each step prints a progress line.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
RPC=$B/test/integration/rpc-client
say() { echo "lazy-dump: $*"; }
[ "$(id -u)" = 0 ] || { echo "lazy-dump: needs root"; exit 77; }
command -v unshare >/dev/null || { echo "lazy-dump: unshare is not installed"; exit 77; }
[ -x "$V" ] && [ -x "$RPC" ] && [ -x "$CRIU_LIKE" ] || { echo "lazy-dump: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")
V=$(realpath "$V")

tmp=$(mktemp -d)
vp=
rp=
op=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	[ -n "$rp" ] && kill -KILL "$rp" 2>/dev/null
	[ -n "$op" ] && kill -KILL "$op" 2>/dev/null
	pkill -KILL -P $$ 2>/dev/null
	[ -n "${KEEP:-}" ] && cp -r "$tmp" "$KEEP"
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

. "$(dirname "$0")/victim-steps.inc"

# $1: pid; gone (or a zombie) within 10 s
gone() {
	n=0
	while [ -d /proc/$1 ] && [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		[ $n -le 1000 ] || return 1
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
			exit 1
		fi
		sleep 0.1
	done
	wait $1
	rc=$?
}

# child $1 ($2: what) exits 0 within 60 s
exits_ok() {
	wait_child $1 "$2" 60
	[ $rc = 0 ] || { echo "FAIL: $2 exited $rc"; fail=1; }
}

# child $1 ($2: what) exits with an error within 60 s ($3: the case, for the message)
exits_failed() {
	wait_child $1 "$2" 60
	[ $rc != 0 ] || { echo "FAIL: $2 exited 0 $3"; fail=1; }
}

# $1: file, $2: text; within 30 s
wait_log() {
	n=0
	until grep -q "$2" "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 3000 ] || { echo "FAIL: no '$2' in $1 within 30 s"; exit 1; }
		sleep 0.01
	done
}

# the pid of the victim whose memory file is $tmp/mem
victim_pid() {
	pgrep -f "^$V 16 $tmp/mem\$" | head -1
}

# $1: a victim; it saves its memory to $tmp/mem.B, which must equal $tmp/mem.A
memory_same() {
	before=$(grep -c "^saved" "$tmp/out")
	rm -f "$tmp/mem.B"
	kill -USR1 $1
	n=0
	until [ "$(grep -c "^saved" "$tmp/out")" -gt "$before" ]; do
		n=$((n + 1))
		[ $n -le 3000 ] || { echo "FAIL: $1 did not save its memory in 30 s"; fail=1; return; }
		sleep 0.01
	done
	cmp -s "$tmp/mem.A" "$tmp/mem.B" || { echo "FAIL: the memory of $1 differs"; fail=1; }
}

# the restored tree $rp holds the victim's memory; then it goes
restored_ok() {
	memory_same $rp
	kill -KILL $rp
	gone $rp
	rp=
}

# a free port of 127.0.0.1 (the kernel's pick), one per dump: a keeper may hold the last one
new_port() {
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
}
new_port

# the keeper the last dump started, if any, gone (it answers for CRIU_LIKE_LAZY_KEEP_S s)
keeper_gone() {
	kp=$(sed -n 's/.*: the keeper \([0-9]*\) answers.*/\1/p' "$tmp/d/d.log")
	[ -z "$kp" ] || gone $kp || { n=0; while [ -d /proc/$kp ] && [ $n -lt 10 ]; do
		sleep 1; n=$((n + 1)); done; }
	[ -z "$kp" ] || [ ! -d /proc/$kp ] || [ "$(awk '{print $3}' /proc/$kp/stat)" = Z ] ||
		{ echo "FAIL: the keeper $kp is left"; fail=1; }
}

# a fresh victim, quiet, its memory saved to $tmp/mem.A; its pid in vp
start_victim() {
	: >"$tmp/out"
	unshare -p -f setsid "$V" 16 "$tmp/mem" >"$tmp/out" 2>&1 </dev/null &
	wait_line ready
	vp=$(victim_pid)
	[ -n "$vp" ] || { echo "FAIL: no victim"; exit 1; }
	kill -USR2 $vp
	wait_line quiet
}

# the lazy dump of $vp into $tmp/d ($dp), then the daemon ($lp): prefetch delay $1 ms,
# --timeout $2; $3, $4: CRIU_LIKE_TEST_LAZY_DROP of the dump and of the daemon
lazy_dump() {
	new_port
	rm -rf "$tmp/d" "$tmp/w"
	mkdir "$tmp/d" "$tmp/w"
	CRIU_LIKE_TEST_LAZY_DROP=${3:-} CRIU_LIKE_LAZY_KEEP_S=5 "$C" dump --lazy-pages -t $vp \
		-D "$tmp/d" --address 127.0.0.1 --port $port -v4 -o d.log &
	dp=$!
	wait_log "$tmp/d/d.log" "lazy pages are served on"
	CRIU_LIKE_TEST_LAZY_DROP=${4:-} CRIU_LIKE_LAZY_PREFETCH_DELAY_MS=$1 "$C" lazy-pages \
		--page-server --address 127.0.0.1 --port $port -D "$tmp/w" --timeout $2 -v4 \
		-o lazy.log 2>/dev/null &
	lp=$!
}

restore() {
	"$C" restore --lazy-pages -D "$tmp/d" -W "$tmp/w" -d -v4 -o r.log \
		--pidfile "$tmp/rpid" || { echo "FAIL: restore"; exit 1; }
	# not by its command line: /proc/PID/cmdline of a task whose stack is lazy reads empty
	rp=$(cat "$tmp/rpid")
	[ -n "$rp" ] || { echo "FAIL: no restored victim"; exit 1; }
}

say "1. every page served from the frozen tree"
start_victim
lazy_dump 0 30
restore
exits_ok $lp "lazy-pages --page-server"
exits_ok $dp "dump --lazy-pages"
gone $vp || { echo "FAIL: the source tree $vp runs on after a complete restore"; fail=1; }
grep -q "killing the tree" "$tmp/d/d.log" || { echo "FAIL: the dump did not end its tree"; fail=1; }
grep -q "the restore is complete: [1-9][0-9]* bytes of pages served from the tree" \
	"$tmp/d/d.log" || { echo "FAIL: no page was read from the tree"; fail=1; }
# the pages image holds holes, not the pages (tmpfs or disk: far less than 16 MiB)
[ "$(du -k "$tmp/d/pages-0.img" | cut -f1)" -lt 8192 ] ||
	{ echo "FAIL: the lazy dump wrote the pages"; fail=1; }
restored_ok
keeper_gone

say "2. the lazy-pages daemon killed while every page is still lazy"
start_victim
lazy_dump 60000 30
restore
gd=$(ps -eo pid,ppid,comm | awk -v p=$lp '$2 == p && $3 == "criu-like-lzgd" { print $1 }')
kill -KILL $lp
gone $rp || { echo "FAIL: the restored tree runs on without its daemon"; fail=1; }
exits_failed $dp "dump --lazy-pages" "without its daemon"
grep -q "the tree resumes" "$tmp/d/d.log" || { echo "FAIL: the dump did not resume"; fail=1; }
[ -z "$gd" ] || gone $gd || { echo "FAIL: the guard $gd is left"; fail=1; }
st=$(awk '{print $3}' /proc/$vp/stat 2>/dev/null)
[ "$st" = S ] || [ "$st" = R ] || { echo "FAIL: the source tree is not running ($st)"; fail=1; }
rp=
memory_same $vp
keeper_gone

say "2b. the dump killed while every page is still lazy"
kill -KILL $vp # it saves its memory once
gone $vp
start_victim
lazy_dump 60000 30
restore
kill -KILL $dp
wait $dp 2>/dev/null
# the daemon sees its source go at once (not at its next read, a minute away)
wait_child $lp "lazy-pages without its source" 30
[ $rc != 0 ] || { echo "FAIL: lazy-pages exited 0 without its source"; fail=1; }
gone $rp || { echo "FAIL: the restored tree runs on without its source"; fail=1; }
grep -q "the page source closed its connection" "$tmp/w/lazy.log" ||
	{ echo "FAIL: the daemon did not see its source go"; fail=1; }
rp=
# a dumper killed at any instant leaves its tree working (infect.md)
st=$(awk '{print $3}' /proc/$vp/stat 2>/dev/null)
[ "$st" = S ] || [ "$st" = R ] || { echo "FAIL: the source tree is not running ($st)"; fail=1; }
memory_same $vp

say "3. the daemon gone before any restore"
kill -KILL $vp # it saves its memory once
gone $vp
start_victim
lazy_dump 0 1
wait_child $lp "lazy-pages without a restore" 30
[ $rc != 0 ] || { echo "FAIL: lazy-pages exited 0 without a restore"; fail=1; }
exits_failed $dp "dump --lazy-pages" "with no restore"
st=$(awk '{print $3}' /proc/$vp/stat 2>/dev/null)
[ "$st" = S ] || [ "$st" = R ] || { echo "FAIL: the source tree is not running ($st)"; fail=1; }
memory_same $vp

keeper_gone

# The daemon has every page and says DONE; the message, or the answer, is lost: the
# restored tree stops, the daemon asks the dump's keeper, exactly one copy runs.
say "4. the answer to DONE lost: the keeper says the source was killed"
kill -KILL $vp
gone $vp
start_victim
lazy_dump 0 30 answer
restore
wait_child $lp "lazy-pages asking again" 60
[ $rc = 0 ] || { echo "FAIL: lazy-pages exited $rc once the keeper answered"; fail=1; }
wait_child $dp "dump --lazy-pages" 60
[ $rc = 0 ] || { echo "FAIL: dump --lazy-pages exited $rc after DONE"; fail=1; }
gone $vp || { echo "FAIL: the source tree $vp runs on"; fail=1; }
grep -q "asking it again" "$tmp/w/lazy.log" || { echo "FAIL: the daemon did not ask again"; fail=1; }
wait_log "$tmp/d/d.log" "DONE asked again: the tree was killed"
st=$(awk '{print $3}' /proc/$rp/stat 2>/dev/null)
[ "$st" = S ] || [ "$st" = R ] || { echo "FAIL: the restored tree is not running ($st)"; fail=1; }
restored_ok
keeper_gone

say "5. DONE lost: the source resumes, the restored tree stays stopped, then is killed"
start_victim
lazy_dump 0 30 "" done
restore
exits_failed $dp "dump --lazy-pages" "without DONE"
grep -q "keeper" "$tmp/d/d.log" && { echo "FAIL: a resumed tree left a keeper"; fail=1; }
st=$(awk '{print $3}' /proc/$vp/stat 2>/dev/null)
[ "$st" = S ] || [ "$st" = R ] || { echo "FAIL: the source tree is not running ($st)"; fail=1; }
# the daemon asks again for 30 s: its tree waits stopped, never running beside the source
wait_log "$tmp/w/lazy.log" "asking it again"
st=$(awk '{print $3}' /proc/$rp/stat 2>/dev/null)
[ "$st" = T ] || [ -z "$st" ] || { echo "FAIL: the restored tree runs beside the source ($st)"; fail=1; }
exits_failed $lp "lazy-pages asking again" "though the source resumed"
gone $rp || { echo "FAIL: the restored tree runs beside the resumed source"; fail=1; }
rp=
memory_same $vp

say "6. on top of a pre-dump: the parent's pages from its images, the rest from the tree"
kill -KILL $vp
gone $vp
: >"$tmp/out"
unshare -p -f setsid "$V" 16 "$tmp/mem" >"$tmp/out" 2>&1 </dev/null &
wait_line ready
vp=$(victim_pid)
rm -rf "$tmp/p1"
mkdir "$tmp/p1"
"$C" pre-dump -t $vp -D "$tmp/p1" -o pd.log || { echo "FAIL: pre-dump"; exit 1; }
kill -USR2 $vp
wait_line quiet
new_port
rm -rf "$tmp/d" "$tmp/w"
mkdir "$tmp/d" "$tmp/w"
"$C" dump --lazy-pages -t $vp -D "$tmp/d" --prev-images-dir ../p1 --address 127.0.0.1 \
	--port $port -v4 -o d.log &
dp=$!
wait_log "$tmp/d/d.log" "lazy pages are served on"
"$C" lazy-pages --page-server --address 127.0.0.1 --port $port -D "$tmp/w" --timeout 30 \
	-o lazy.log 2>/dev/null &
lp=$!
restore
exits_ok $lp "lazy-pages --page-server"
exits_ok $dp "dump --lazy-pages --prev-images-dir"
gone $vp || { echo "FAIL: the source tree $vp runs on"; fail=1; }
restored_ok
vp=

say "7. through the RPC (runc checkpoint --lazy-pages --page-server A:P --status-fd)"
start_victim
new_port
rm -rf "$tmp/d" "$tmp/w"
mkdir "$tmp/d" "$tmp/w"
"$RPC" "swrk:$C" dump dir="$tmp/d" pid=$vp lazy_pages=1 ps_address=127.0.0.1 ps_port=$port \
	status_fd=1 notify=1 log_level=4 >"$tmp/rpc.out" 2>&1 &
dp=$!
wait_log "$tmp/d/dump.log" "lazy pages are served on"
"$C" lazy-pages --page-server --address 127.0.0.1 --port $port -D "$tmp/w" --timeout 30 \
	-o lazy.log 2>/dev/null &
lp=$!
restore
exits_ok $lp "lazy-pages --page-server"
wait_child $dp "the RPC client's lazy DUMP" 60
[ $rc = 0 ] || { echo "FAIL: the lazy DUMP failed: $(cat "$tmp/rpc.out")"; fail=1; }
for want in "resp DUMP success=1" "status_fd ready" "notify status-ready"; do
	grep -q "$want" "$tmp/rpc.out" || { echo "FAIL: no '$want' in $(cat "$tmp/rpc.out")"; fail=1; }
done
gone $vp || { echo "FAIL: the source tree $vp runs on"; fail=1; }
restored_ok
vp=

say "8. what a lazy dump cannot be"
start_victim
refused() {
	"$C" "$@" -t $vp -D "$tmp/d" --address 127.0.0.1 --port $port -o x.log 2>"$tmp/err" &&
		{ echo "FAIL: $* accepted"; fail=1; return; }
	grep -q -- "$R" "$tmp/err" || { echo "FAIL: $*: no '$R' in: $(cat "$tmp/err")"; fail=1; }
}
R=--leave-running refused dump --lazy-pages -R
R=--snapshot refused dump --lazy-pages -R --snapshot
R="a pre-dump lets the tree run" refused pre-dump --lazy-pages
R="needs --port" "$C" dump --lazy-pages -t $vp -D "$tmp/d" -o x.log 2>"$tmp/err" &&
	{ echo "FAIL: dump --lazy-pages without a port accepted"; fail=1; }
grep -q "needs --port" "$tmp/err" || { echo "FAIL: no port: $(cat "$tmp/err")"; fail=1; }
st=$(awk '{print $3}' /proc/$vp/stat 2>/dev/null)
[ "$st" = S ] || [ "$st" = R ] || { echo "FAIL: a refusal left the tree $st"; fail=1; }

say "9. a copy of a lazy dump's images: refused by all but the dump's own daemon"
kill -KILL $vp
gone $vp
start_victim
new_port
rm -rf "$tmp/d" "$tmp/w" "$tmp/c" "$tmp/n" "$tmp/w2" "$tmp/s" "$tmp/w3" "$tmp/o" "$tmp/w4"
mkdir "$tmp/d" "$tmp/w" "$tmp/n" "$tmp/w2"
"$C" dump --lazy-pages -t $vp -D "$tmp/d" --address 127.0.0.1 --port $port -v4 -o d.log &
dp=$!
dport=$port
wait_log "$tmp/d/d.log" "lazy pages are served on"
cp -a "$tmp/d" "$tmp/c"
M="pages of a lazy dump, served by the dump at 127.0.0.1:$dport"
# $1: what; the rest: the command, which must fail naming the copy's pagemap and where
lazy_refused() {
	what=$1
	shift
	"$@" >"$tmp/err" 2>&1 && { echo "FAIL: $what accepted a lazy dump's images"; fail=1; return; }
	cat "$tmp/err" >>"$tmp/refusals" # KEEP=dir keeps them
	grep -q -- "$what: $tmp/c/pagemap-[0-9]*.img: $M" "$tmp/err" ||
		{ echo "FAIL: $what: no '$what: $tmp/c/pagemap-N.img: $M' in: $(cat "$tmp/err")"; fail=1; }
}
rm -f "$tmp/rpid"
lazy_refused restore "$C" restore -D "$tmp/c" -d -o r0.log --pidfile "$tmp/rpid"
lazy_refused lazy-pages "$C" lazy-pages -D "$tmp/c" --timeout 5 -o l0.log
new_port
lazy_refused page-server "$C" page-server --lazy-pages -D "$tmp/c" --address 127.0.0.1 \
	--port $port -o ps0.log
lazy_refused dump "$C" dump -t $vp -D "$tmp/n" --prev-images-dir "$tmp/c" -o n.log
lazy_refused dedup "$C" dedup -D "$tmp/c" -o dd.log
lazy_refused check-images "$C" check-images "$tmp/c"
grep -q "crc32c" "$tmp/err" && { echo "FAIL: check-images speaks of crc32c: $(cat "$tmp/err")"; fail=1; }
# a daemon that reads images (here none: not a dump's directory) is not trusted with holes
"$C" lazy-pages -D "$tmp/w2" --timeout 20 -o l2.log 2>/dev/null &
l2=$!
lazy_refused restore "$C" restore --lazy-pages -D "$tmp/c" -W "$tmp/w2" -d -o r2.log \
	--pidfile "$tmp/rpid"
grep -q "its lazy-pages daemon reads images" "$tmp/err" ||
	{ echo "FAIL: restore --lazy-pages did not say why: $(cat "$tmp/err")"; fail=1; }
kill -KILL $l2 2>/dev/null # it ends with the refused restore's connection
wait $l2 2>/dev/null
[ ! -e "$tmp/rpid" ] || { echo "FAIL: a refused restore restored $(cat "$tmp/rpid")"; fail=1; }
# a page server that serves the copy without a word (its directory filled once it listened,
# as an older criu-like would serve it): the daemon refuses what it mirrored
new_port
mkdir "$tmp/s" "$tmp/w3"
"$C" page-server --lazy-pages -D "$tmp/s" --address 127.0.0.1 --port $port -v4 -o ps3.log &
psp=$!
wait_log "$tmp/s/ps3.log" "listening on"
cp -a "$tmp/c/." "$tmp/s/"
"$C" lazy-pages --page-server --address 127.0.0.1 --port $port -D "$tmp/w3" --timeout 5 \
	-o l3.log >"$tmp/err" 2>&1 && { echo "FAIL: lazy-pages took a copy's holes"; fail=1; }
grep -q "lazy-pages: page server 127.0.0.1:$port: ./pagemap-[0-9]*.img: $M.*: that page server serves a copy" \
	"$tmp/err" || { echo "FAIL: lazy-pages from a copy: $(cat "$tmp/err")"; fail=1; }
wait_child $psp "page-server --lazy-pages of the copy" 30
# a daemon at another lazy dump (of another tree): its pages are not these images
unshare -p -f setsid sleep 1234.567 </dev/null >/dev/null 2>&1 &
n=0
until op=$(pgrep -f '^sleep 1234.567$'); do
	n=$((n + 1)); [ $n -le 1000 ] || { echo "FAIL: no other victim"; exit 1; }; sleep 0.01
done
new_port
mkdir "$tmp/o" "$tmp/w4"
"$C" dump --lazy-pages -t $op -D "$tmp/o" --address 127.0.0.1 --port $port -v4 -o d.log &
odp=$!
wait_log "$tmp/o/d.log" "lazy pages are served on"
"$C" lazy-pages --page-server --address 127.0.0.1 --port $port -D "$tmp/w4" --timeout 20 \
	-o l4.log 2>/dev/null &
olp=$!
lazy_refused restore "$C" restore --lazy-pages -D "$tmp/c" -W "$tmp/w4" -d -o r4.log \
	--pidfile "$tmp/rpid"
grep -q "its lazy-pages daemon serves the pages of another lazy dump" "$tmp/err" ||
	{ echo "FAIL: restore --lazy-pages did not say why: $(cat "$tmp/err")"; fail=1; }
[ ! -e "$tmp/rpid" ] || { echo "FAIL: a refused restore restored $(cat "$tmp/rpid")"; fail=1; }
wait_child $olp "lazy-pages of the other dump" 30
exits_failed $odp "the other lazy dump" "without a restore"
st=$(awk '{print $3}' /proc/$op/stat 2>/dev/null)
[ "$st" = S ] || { echo "FAIL: the other tree is not running again ($st)"; fail=1; }
kill -KILL $op
gone $op
op=
# the one that reads them: the dump's own daemon, for a restore of the copy
"$C" lazy-pages --page-server --address 127.0.0.1 --port $dport -D "$tmp/w" --timeout 30 \
	-o lazy.log 2>/dev/null &
lp=$!
"$C" restore --lazy-pages -D "$tmp/c" -W "$tmp/w" -d -v4 -o r.log --pidfile "$tmp/rpid" ||
	{ echo "FAIL: restore --lazy-pages of the copy with the dump's daemon"; exit 1; }
rp=$(cat "$tmp/rpid")
exits_ok $lp "lazy-pages --page-server"
exits_ok $dp "dump --lazy-pages"
gone $vp || { echo "FAIL: the source tree $vp runs on"; fail=1; }
restored_ok
vp=
keeper_gone

[ $fail = 0 ] && echo "lazy-dump: ok"
exit $fail
