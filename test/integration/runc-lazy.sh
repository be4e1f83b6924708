#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# runc's lazy migration (post-copy) with criu-like as its CRIU, as runc's
# documentation and its own test drive it, source and destination on this host:
#   runc checkpoint --lazy-pages --page-server 127.0.0.1:PORT --status-fd FD ID
#       (returns only once every page is served; the container stays frozen)
#   criu-like lazy-pages --page-server --address 127.0.0.1 --port PORT -D IMG
#       (once the byte came on FD)
#   runc restore --lazy-pages --work-path IMG -d ID2
#       (the restore finds its daemon at IMG/lazy-pages.socket: the daemon's
#       work directory, its -D, must be the restore's work path)
# The container (runc.inc's bundle) counts in /data/count, its count in a
# shell variable, and holds ~170 KiB of `seq` output in another, whose md5sum
# it writes beside the count each turn: both live in its heap, the memory the
# dump leaves to the daemon. Checked: the checkpoint writes the byte on FD and
# keeps the container frozen (no count); runc reports ID2 running; its first
# count is the dumped one + 1, its md5sum the one of `seq` (a page lost is
# zeros); the checkpoint returns 0 once the daemon had every page (its log says
# how many bytes came from the tree), ID is gone (runc state, no process left in
# its cgroup); nothing left behind: no listener on PORT (page server, keeper
# criu-like-lzdk after its 40 s), no process of runc, criu-like or the daemon
# (their cwd is $tmp/run), no nft table of this test's criu-like (a kept lock
# naming its images, a lock of a criu-like gone), no process in the source's
# network namespace and no bind of it.
# The second container comes from the same bundle (the same rootfs and /data:
# the count file is the one it continues) under another id: runc gives it a
# cgroup of its own (/ID2, the spec has no cgroupsPath) and new namespaces; the
# source's frozen tree keeps its own until it is killed.
set -u
NAME=runc-lazy
id=criu-like-lzsrc-$$
id2=criu-like-lzdst-$$
. "$(dirname "$0")/runc-lazy.inc"
. "$(dirname "$0")/runc.inc"
command -v ss >/dev/null || { echo "runc-lazy: ss is not installed"; exit 77; }
port=$((20000 + $$ % 20000))
sum=$(seq 1 $SEQN | md5sum | cut -d' ' -f1)
tables() { command -v nft >/dev/null && nft list tables 2>/dev/null | sort; }
tables >"$tmp/nft.before"
# runc, criu-like and the daemon run in $tmp/run: what of them is left has its cwd in $tmp
# (the containers' processes theirs in the rootfs)
mkdir -p "$tmp/run"
inrun() { (cd "$tmp/run" && exec "$@"); }
left_procs() {
	for p in /proc/[0-9]*; do
		c=$(readlink "$p/cwd" 2>/dev/null) || continue
		case $c in
		"$tmp/bundle/rootfs" | "$tmp/bundle/rootfs/"*) ;;
		"$tmp" | "$tmp/"*) echo "${p#/proc/} $(cat "$p/comm" 2>/dev/null) in $c" ;;
		esac
	done
}
listening() { ss -tlnH "( sport = :$port )" | grep -q .; }
listening && { echo "runc-lazy: port $port is taken"; exit 77; }

piped run inrun runc run -d -b "$tmp/bundle" "$id" || fail "runc run -d"
wait_more 10 "start"
[ "$(cut -d' ' -f3 "$tmp/data/count")" = "$sum" ] || fail "the container's md5sum is not seq's"
set -- $(state_of "$id")
[ "${1:-}" = running ] || fail "the container is '${1:-gone}' after runc run"
spid=$2
# its cgroup: the unified hierarchy's, or (cgroup v1) the pids controller's
if [ -e /sys/fs/cgroup/cgroup.procs ]; then
	scg=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$spid/cgroup")
else
	scg=/sys/fs/cgroup/pids$(sed -n 's/^[0-9]*:pids://p' "/proc/$spid/cgroup")
fi
grep -q -x "$spid" "$scg/cgroup.procs" || fail "the container's init is not in $scg"
snet=$(stat -L -c %i "/proc/$spid/ns/net")

# the status fd: the write end of a fifo whose read end this shell holds
mkfifo "$tmp/status"
exec 6<>"$tmp/status"
mkdir -p "$tmp/wk"
inrun runc --criu "$CRIU_LIKE" checkpoint --lazy-pages --page-server "127.0.0.1:$port" \
	--status-fd 5 --image-path "$tmp/img" --work-path "$tmp/wk" "$id" \
	>"$tmp/ckpt.out" 2>&1 5>"$tmp/status" &
ckpt=$!
# the byte, once the pages are served (a bounded wait: the checkpoint may fail)
b=$(timeout 60 dd bs=1 count=1 <&6 2>/dev/null | od -An -c | tr -d ' ')
exec 6<&-
[ "$b" = '\0' ] || fail "no \\0 on the status fd (got '$b')"
listening || fail "nothing listens on 127.0.0.1:$port after the status byte"
[ -e "$tmp/img/inventory.img" ] || fail "the checkpoint wrote no inventory"
kill -0 $ckpt 2>/dev/null || fail "runc checkpoint returned before any page was served"
c=$(count)
lines=$(wc -l <"$tmp/data/log")
old=$(tail -n1 "$tmp/data/log")
sleep 0.2
[ "$(count)" = "$c" ] && [ "$(wc -l <"$tmp/data/log")" = "$lines" ] ||
	fail "the count goes on while the checkpoint serves ($c, $(count))"

inrun "$CRIU_LIKE" lazy-pages --page-server --address 127.0.0.1 --port "$port" -D "$tmp/img" \
	-o lazy-pages.log -v4 >"$tmp/lp.out" 2>&1 &
lp=$!
piped restore inrun runc --criu "$CRIU_LIKE" restore -d --lazy-pages --image-path "$tmp/img" \
	--work-path "$tmp/img" -b "$tmp/bundle" "$id2" || fail "runc restore --lazy-pages"
set -- $(state_of "$id2")
[ "${1:-}" = running ] || fail "after runc restore --lazy-pages $id2 is '${1:-gone}'"
hp=$2
i=0
while [ "$(wc -l <"$tmp/data/log")" -le "$lines" ]; do
	i=$((i + 1)); [ $i -gt 500 ] && fail "after restore: the loop does not count"; sleep 0.02
done
first=$(sed -n "$((lines + 1))p" "$tmp/data/log")
[ "$first" = $((old + 1)) ] || fail "the count started again: $old at the checkpoint, then $first"
wait_more "$first" "after restore"
[ "$(cut -d' ' -f3 "$tmp/data/count")" = "$sum" ] ||
	fail "the restored memory is not the dumped one: md5sum '$(cut -d' ' -f3 "$tmp/data/count")'"
[ "$(cut -d' ' -f2 "$tmp/data/count")" = runcbox ] || fail "the hostname is not kept"
[ "$(awk '/^NSpid:/ { print $NF }' "/proc/$hp/status")" = 1 ] ||
	fail "the restored init is not pid 1 in its namespace"

# the transfer ends: the daemon, then the checkpoint (its source killed)
i=0
while kill -0 $lp 2>/dev/null || kill -0 $ckpt 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 3000 ] && fail "the daemon or runc checkpoint does not end"; sleep 0.02
done
wait $lp || fail "the lazy-pages daemon failed ($?)"
lp=
wait $ckpt || fail "runc checkpoint --lazy-pages failed ($?)"
ckpt=
bytes=$(sed -n 's/.*the restore is complete: \([0-9]*\) bytes of pages served from the tree.*/\1/p' \
	"$tmp/wk/dump.log")
[ "${bytes:-0}" -gt 0 ] || fail "the dump log says no page was served from the tree"
[ -z "$(state_of "$id")" ] || fail "$id is still there after the transfer: $(state_of "$id")"
# killed (SIGKILL) before the dump's answer; gone once its parent reaped it
i=0
while [ -d "/proc/$spid" ] && ! grep -q '^State:.*Z' "/proc/$spid/status" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 500 ] && fail "the source's init $spid still runs: $(grep State: /proc/$spid/status)"
	sleep 0.02
done
[ ! -s "$scg/cgroup.procs" ] ||
	fail "processes left in the source's cgroup $scg: $(cat "$scg/cgroup.procs")"
n=$(count)
wait_more "$n" "after the transfer"
[ "$(cut -d' ' -f3 "$tmp/data/count")" = "$sum" ] || fail "the memory changed after the transfer"
set -- $(state_of "$id2")
[ "${1:-}" = running ] || fail "after the transfer $id2 is '${1:-gone}'"

# nothing left: the keeper (if the dump left one) holds the port at most 40 s
i=0
while listening; do
	i=$((i + 1)); [ $i -gt 2500 ] && fail "something still listens on $port: $(ss -tlnpH "( sport = :$port )")"
	sleep 0.02
done
i=0
while [ -n "$(left_procs)" ]; do
	i=$((i + 1)); [ $i -gt 500 ] && fail "processes of runc or criu-like are left: $(left_procs)"
	sleep 0.02
done
# criu-like's nft tables made since the start that are this test's: a kept lock naming its
# images, a lock of a criu-like that is gone (other tests may run meanwhile: their tables are
# their own)
our_tables() {
	tables >"$tmp/nft.after"
	comm -13 "$tmp/nft.before" "$tmp/nft.after" | while read -r _ fam name; do
		case $name in
		criu_like_kept_*)
			nft list table "$fam" "$name" 2>/dev/null | grep -q -F "$tmp" &&
				echo "$fam $name" ;;
		criu_like_*)
			p=${name#criu_like_}
			[ -d "/proc/${p%%_*}" ] || echo "$fam $name" ;;
		esac
	done
}
i=0
while [ -n "$(our_tables)" ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "nft tables left: $(our_tables)"; sleep 0.02
done
# the source's network namespace went with it (no process in it, none bound: its holder gone)
for p in /proc/[0-9]*; do
	[ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$snet" ] &&
		fail "pid ${p#/proc/} ($(cat "$p/comm")) is in the source's network namespace"
done
grep -q "net:\[$snet\]" /proc/self/mountinfo && fail "the source's network namespace is bound"
runc delete -f "$id2" >/dev/null 2>&1
echo "runc-lazy: checkpoint --lazy-pages, lazy-pages --page-server, restore --lazy-pages:" \
	"$old at the checkpoint, $first after, $bytes bytes served from the frozen container," \
	"its memory intact (md5sum), $id gone, nothing left"
