#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# runc's lazy migration (runc-lazy.sh) when something fails, through runc with
# criu-like as its CRIU (Documentation/lazy-pages.md, "A lazy dump", "Through
# runc"). Each case starts runc.inc's container as ID, checkpoints it with
#   runc checkpoint --lazy-pages --page-server 127.0.0.1:PORT --status-fd FD ID
# and, once the byte came, starts
#   criu-like lazy-pages --page-server ... -D IMG   (prefetch held back 60 s:
#       the restored container has pages to fetch for the whole case)
# then:
#  a) runc restore --lazy-pages ID2 runs, then the daemon is SIGKILLed: the
#     restored copy is killed (its guard), runc says ID2 stopped; the checkpoint
#     fails and ID runs on, its memory intact (md5sum of its `seq` heap). Never
#     both: with the guard held stopped, the source does not resume (the guard
#     holds the daemon's connection to it);
#  b) runc restore fails before the tree runs: b1) ID2 taken (runc refuses before
#     criu-like starts; the daemon ends at its --timeout), b2) a bundle without
#     the /data bind (criu-like refuses the mount before it connected to the
#     daemon, then tells it so: the daemon ends at once): the checkpoint fails,
#     ID runs on;
#  c) the source side killed while the destination fetches pages: c1) runc
#     checkpoint alone (SIGKILL): its criu-like goes on serving; the restored
#     copy gets every page and runs on, ID is killed (runc state: stopped);
#     c2) runc checkpoint and its criu-like together (the whole process
#     group, as a killed unit or ^C): the daemon sees its source go and kills
#     the restored copy, ID runs on (as after any killed dump).
# After each case exactly one copy runs (the other's init gone, no process in
# its cgroups), runc deletes the stopped one (it was never left running), and
# once the running one is deleted too nothing is left: no process of runc,
# criu-like or the daemon (their cwd is $tmp/run), no runc state dir, no
# cgroup of either id, no mount naming $tmp, no socket on PORT or under $tmp,
# no new /dev/shm file.
set -u
NAME=runc-lazy-fail
id=criu-like-lfsrc-$$
id2=criu-like-lfdst-$$
. "$(dirname "$0")/runc-lazy.inc"
. "$(dirname "$0")/runc.inc"
command -v ss >/dev/null || { echo "$NAME: ss is not installed"; exit 77; }
command -v setsid >/dev/null || { echo "$NAME: setsid is not installed"; exit 77; }
sum=$(seq 1 $SEQN | md5sum | cut -d' ' -f1)
RUNC_ROOT=/run/runc
mkdir -p "$tmp/run"
ls -A /dev/shm | sort >"$tmp/shm.before"
say() { echo "$NAME: $*"; }

# ---- waits, each bounded ----

# until_ok SECS WHAT CMD...: CMD true within SECS s, else fail
until_ok() {
	secs=$1 what=$2
	shift 2
	i=0
	until "$@"; do
		i=$((i + 1)); [ $i -gt $((secs * 50)) ] && fail "$what (after $secs s)"; sleep 0.02
	done
}
dead() { [ ! -d "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
# a child of this shell ended: its exit status in rc
ended() { ! kill -0 "$1" 2>/dev/null || dead "$1"; }
reap() { # reap PID WHAT: within 60 s, its status in rc
	until_ok 60 "$2 does not end" ended "$1"
	wait "$1"
	rc=$?
}

# ---- the container's copies ----

# the cgroup directories of a container's init (each v1 hierarchy's, or v2's)
cgroups_of() {
	sed -n 's/^[0-9]*:\([^:]*\):\(.*\)/\1 \2/p' "/proc/$1/cgroup" | while read -r c p; do
		c=${c#name=}
		[ -z "$c" ] && [ -e /sys/fs/cgroup/cgroup.procs ] && echo "/sys/fs/cgroup$p"
		[ -n "$c" ] && [ -d "/sys/fs/cgroup/$c$p" ] && echo "/sys/fs/cgroup/$c$p"
		[ -z "$c" ] && [ -d "/sys/fs/cgroup/unified$p" ] && echo "/sys/fs/cgroup/unified$p"
	done
}
# the processes in the cgroups in $1 (a file of paths)
in_cgroups() {
	while read -r d; do
		[ -r "$d/cgroup.procs" ] && cat "$d/cgroup.procs"
	done <"$1"
}
status_of() { set -- $(state_of "$1"); echo "${1:-gone}"; }
counts_past() { [ "$(count)" -gt "$1" ]; }

# a copy runs: runc says so, its init lives, the count goes on with its memory intact
runs() { # runs ID WHAT
	[ "$(status_of "$1")" = running ] || fail "$2: runc says $1 is $(status_of "$1")"
	n=$(count)
	wait_more "$n" "$2"
	[ "$(cut -d' ' -f3 "$tmp/data/count")" = "$sum" ] ||
		fail "$2: the memory is not the dumped one: md5sum '$(cut -d' ' -f3 "$tmp/data/count")'"
}

# a copy is gone: its init dead, nothing in its cgroups, runc says stopped (or never had it)
stopped() { # stopped ID PID CGFILE WHAT
	until_ok 30 "$4: its init $2 still runs" dead "$2"
	k=0
	while [ -n "$(in_cgroups "$3")" ]; do
		k=$((k + 1))
		[ $k -gt 1500 ] &&
			fail "$4: processes left in its cgroups after 30 s: $(in_cgroups "$3" | tr '\n' ' ')"
		sleep 0.02
	done
	s=$(status_of "$1")
	[ "$s" = stopped ] || [ "$s" = gone ] || fail "$4: runc says $1 is $s"
}

start_src() {
	: >"$tmp/data/log"
	rm -f "$tmp/data/count"
	piped run sh -c 'cd "$1" && shift && exec "$@"' - "$tmp/run" \
		runc run -d -b "$tmp/bundle" "$id" || fail "runc run -d"
	wait_more 10 "start"
	set -- $(state_of "$id")
	[ "${1:-}" = running ] || fail "$id is '${1:-gone}' after runc run"
	spid=$2
	cgroups_of "$spid" >"$tmp/scg"
	[ -s "$tmp/scg" ] || fail "no cgroup of $id's init $spid"
}

# the restored copy's init and cgroups, once runc restore returned
dst_started() {
	set -- $(state_of "$id2")
	[ "${1:-}" = running ] || fail "after runc restore --lazy-pages $id2 is '${1:-gone}'"
	dpid=$2
	cgroups_of "$dpid" >"$tmp/dcg"
	[ -s "$tmp/dcg" ] || fail "no cgroup of $id2's init $dpid"
}

# ---- the migration's processes ----

# runc checkpoint --lazy-pages in a process group of its own (case c2 kills the group),
# until the status byte; its pid in ckpt
checkpoint() {
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
	rm -rf "$tmp/img" "$tmp/wk" "$tmp/status"
	mkdir -p "$tmp/wk"
	mkfifo "$tmp/status"
	exec 6<>"$tmp/status"
	setsid sh -c 'cd "$1" && shift && exec "$@"' - "$tmp/run" \
		runc --criu "$CRIU_LIKE" checkpoint --lazy-pages --page-server "127.0.0.1:$port" \
		--status-fd 5 --image-path "$tmp/img" --work-path "$tmp/wk" "$id" \
		>"$tmp/ckpt.out" 2>&1 5>"$tmp/status" &
	ckpt=$!
	b=$(timeout 60 dd bs=1 count=1 <&6 2>/dev/null | od -An -c | tr -d ' ')
	exec 6<&-
	[ "$b" = '\0' ] || fail "no \\0 on the status fd (got '$b')"
	c0=$(count)
	kill -0 $ckpt 2>/dev/null || fail "runc checkpoint returned before any page was served"
}

# lazy-pages --page-server, its prefetch held back $delay ms (60 s unless set: the restored
# copy fetches what it touches, and has pages to fetch for the whole case)
daemon() { # daemon [--timeout SEC]
	(cd "$tmp/run" && CRIU_LIKE_LAZY_PREFETCH_DELAY_MS=${delay:-60000} exec "$CRIU_LIKE" lazy-pages \
		--page-server --address 127.0.0.1 --port "$port" -D "$tmp/img" "$@" \
		-o lazy-pages.log -v4 >"$tmp/lp.out" 2>&1) &
	lp=$!
}

restore() { # restore BUNDLE [ID]: runc restore --lazy-pages's exit status
	piped restore sh -c 'cd "$1" && shift && exec "$@"' - "$tmp/run" \
		runc --criu "$CRIU_LIKE" restore -d --lazy-pages --image-path "$tmp/img" \
		--work-path "$tmp/img" -b "$1" "${2:-$id2}"
}

# the checkpoint failed and its container runs on, counting on from where it was frozen
src_resumed() { # src_resumed WHAT
	reap $ckpt "runc checkpoint ($1)"
	ckpt=
	[ $rc != 0 ] || fail "$1: runc checkpoint --lazy-pages exited 0"
	grep -q "the tree resumes" "$tmp/wk/dump.log" || fail "$1: the dump did not resume its tree"
	dead "$spid" && fail "$1: the source's init $spid is gone"
	runs "$id" "$1: the source after the failed checkpoint"
}

# ---- nothing left ----

left_procs() {
	for p in /proc/[0-9]*; do
		c=$(readlink "$p/cwd" 2>/dev/null) || continue
		case $c in
		"$tmp/bundle/rootfs" | "$tmp/bundle/rootfs/"*)
			echo "${p#/proc/} $(cat "$p/comm" 2>/dev/null) in the rootfs" ;;
		"$tmp" | "$tmp/"*) echo "${p#/proc/} $(cat "$p/comm" 2>/dev/null) in $c" ;;
		esac
	done
}
leftovers() {
	left_procs
	for lid in "$id" "$id2"; do
		[ -e "$RUNC_ROOT/$lid" ] && echo "runc state $RUNC_ROOT/$lid"
		for d in /sys/fs/cgroup/*/"$lid" /sys/fs/cgroup/"$lid"; do
			[ -d "$d" ] && echo "cgroup $d"
		done
	done
	grep -F "$tmp" /proc/self/mountinfo | cut -d' ' -f5 | sed 's/^/mount /'
	ss -tanH "( sport = :$port or dport = :$port )" | grep -v "^TIME-WAIT" | sed "s/^/socket /"
	ss -xaH | grep -F "$tmp" | sed 's/^/socket /'
	ls -A /dev/shm | sort | comm -13 "$tmp/shm.before" - | sed 's,^,/dev/shm/,'
}
# the running copy deleted as runc would (kill, delete); then nothing left
end_case() { # end_case WHAT
	for cid in "$id" "$id2"; do
		[ "$(status_of "$cid")" = running ] || continue
		set -- "$1" $(state_of "$cid")
		runc kill "$cid" KILL >"$tmp/kill.out" 2>&1
		k=0
		while [ "$(status_of "$cid")" != stopped ]; do
			k=$((k + 1))
			[ $k -gt 1500 ] && fail "$1: $cid is not stopped 30 s after runc kill" \
				"($(cat "$tmp/kill.out")): runc says $(status_of "$cid"), its init $3" \
				"$(grep -s State: "/proc/$3/status") $(cat "/proc/$3/wchan" 2>/dev/null)"
			sleep 0.02
		done
	done
	for cid in "$id" "$id2"; do
		[ "$(status_of "$cid")" = gone ] || runc delete "$cid" >"$tmp/delete.out" 2>&1 ||
			fail "$1: runc delete $cid: $(cat "$tmp/delete.out")"
	done
	[ -z "$lp" ] || { reap $lp "the lazy-pages daemon ($1)"; lp=; }
	[ -z "$ckpt" ] || { reap $ckpt "runc checkpoint ($1)"; ckpt=; }
	k=0
	while [ -n "$(leftovers)" ]; do
		k=$((k + 1))
		[ $k -gt 500 ] && fail "$1: left behind after 10 s: $(leftovers | tr '\n' ';')"
		sleep 0.02
	done
	say "$1: ok"
}

say "a) the destination's daemon killed while the restored copy has pages to fetch"
start_src
checkpoint
daemon
restore "$tmp/bundle" || fail "a) runc restore --lazy-pages"
dst_started
until_ok 10 "a) the restored copy does not count" counts_past "$c0"
kill -0 $ckpt 2>/dev/null || fail "a) runc checkpoint ended before the daemon was killed"
gd=$(ps -eo pid,ppid,comm | awk -v p=$lp '$2 == p && $3 == "criu-like-lzgd" { print $1 }')
[ -n "$gd" ] || fail "a) no guard of the lazy-pages daemon $lp"
# never both: the guard holds the daemon's connection to the source too, so the source resumes
# only once the guard killed the restored copy; held stopped, nothing resumes meanwhile
kill -STOP $gd
kill -KILL $lp
wait $lp 2>/dev/null
lp=
sleep 0.5
grep -q "the tree resumes" "$tmp/wk/dump.log" &&
	fail "a) the source resumed before the guard killed the restored copy"
kill -0 $ckpt 2>/dev/null || fail "a) runc checkpoint ended before the guard killed the copy"
kill -CONT $gd
stopped "$id2" "$dpid" "$tmp/dcg" "a) the restored copy"
until_ok 10 "a) the guard $gd is left" dead "$gd"
src_resumed "a)"
end_case "a)"

say "b1) runc restore fails before criu-like runs: the id is taken"
start_src
checkpoint
daemon --timeout 3
restore "$tmp/bundle" "$id" && fail "b1) runc restore --lazy-pages of a taken id succeeded"
# runc refused it itself: the daemon, never reached, ends at its --timeout
grep -q "already exists" "$tmp/restore.out" ||
	fail "b1) runc restore did not say the id is taken: $(cat "$tmp/restore.out")"
reap $lp "b1) the lazy-pages daemon without a restore"
lp=
[ $rc != 0 ] || fail "b1) the lazy-pages daemon exited 0 without a restore"
src_resumed "b1)"
end_case "b1)"

say "b2) runc restore fails before the tree runs: a bundle without the /data bind"
mkdir -p "$tmp/bundle2"
python3 - "$tmp" <<'PY' || fail "cannot write bundle2's config.json"
import json, sys
t = sys.argv[1]
c = json.load(open(t + '/bundle/config.json'))
c['root']['path'] = t + '/bundle/rootfs'
c['mounts'] = [m for m in c['mounts'] if m['destination'] != '/data']
json.dump(c, open(t + '/bundle2/config.json', 'w'), indent=1)
PY
start_src
checkpoint
daemon
restore "$tmp/bundle2" && fail "b2) runc restore --lazy-pages without /data succeeded"
[ "$(status_of "$id2")" = gone ] ||
	fail "b2) after its failed restore runc has $id2 $(status_of "$id2")"
reap $lp "b2) the lazy-pages daemon after a failed restore"
lp=
[ $rc != 0 ] || fail "b2) the lazy-pages daemon exited 0 after a failed restore"
# told by the restore (not at its --timeout, 60 s): the source frozen no longer than that
grep -q "the restore failed before it connected" "$tmp/img/lazy-pages.log" ||
	fail "b2) the daemon was not told of the failed restore"
src_resumed "b2)"
end_case "b2)"


say "c1) runc checkpoint SIGKILLed while the destination fetches pages: its criu-like goes on"
start_src
checkpoint
delay=4000 daemon
restore "$tmp/bundle" || fail "c1) runc restore --lazy-pages"
# the daemon held while runc goes: no DONE before (its prefetch is 4 s away, the copy waits)
kill -STOP $lp
grep -q "has every page" "$tmp/wk/dump.log" && fail "c1) the daemon was done before runc was killed"
kill -0 $ckpt 2>/dev/null || fail "c1) runc checkpoint ended before it was killed"
cr=$(pgrep -P $ckpt -x criu-like)
[ -n "$cr" ] || fail "c1) no criu-like under runc checkpoint $ckpt"
kill -KILL $ckpt
wait $ckpt 2>/dev/null
ckpt=
kill -CONT $lp
dst_started
reap $lp "c1) the lazy-pages daemon"
lp=
[ $rc = 0 ] || fail "c1) the lazy-pages daemon exited $rc"
until_ok 30 "c1) the dump's criu-like $cr does not end" dead "$cr"
grep -q "the restore is complete" "$tmp/wk/dump.log" || fail "c1) the dump did not complete"
stopped "$id" "$spid" "$tmp/scg" "c1) the source"
runs "$id2" "c1) the restored copy"
end_case "c1)"

say "c2) runc checkpoint and its criu-like SIGKILLed while the destination fetches pages"
start_src
checkpoint
daemon
restore "$tmp/bundle" || fail "c2) runc restore --lazy-pages"
dst_started
until_ok 10 "c2) the restored copy does not count" counts_past "$c0"
cr=$(pgrep -P $ckpt -x criu-like)
[ -n "$cr" ] || fail "c2) no criu-like under runc checkpoint $ckpt"
kill -KILL -$ckpt
wait $ckpt 2>/dev/null
ckpt=
# the daemon sees its source go at once (not at its next read) and kills the restored copy
reap $lp "c2) the lazy-pages daemon without its source"
lp=
[ $rc != 0 ] || fail "c2) the lazy-pages daemon exited 0 without its source"
# (seen on its connection, or by a read it was making then)
grep -q "killing the lazily restored tree: its memory cannot be completed" \
	"$tmp/img/lazy-pages.log" || fail "c2) the daemon did not kill the copy for its source's end"
stopped "$id2" "$dpid" "$tmp/dcg" "c2) the restored copy"
until_ok 10 "c2) the dump's criu-like $cr is left" dead "$cr"
runs "$id" "c2) the source after its dump was killed"
end_case "c2)"
say "ok"
