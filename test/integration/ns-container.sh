#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The container of issue 13: a busybox-static rootfs entered with
# `unshare --fork --pid --mount --uts --ipc --net` and pivot_root, its own
# /proc mounted inside (the container's pid namespace), sysfs, devtmpfs, a
# tmpfs /tmp holding files, /data bound in from the host (--external), its
# hostname, a SysV segment, semaphore set and message queue made inside
# (ipcmk through nsenter), a POSIX queue in its own mqueue mount at /mq, a
# file of its tmpfs deleted but held open twice by the loop, and a loop, the container's init (pid 1), that
# counts in /data/count and writes what `ps` shows to /data/ps. Dumped and
# restored twice (--root, --external); each time checked:
#   - the restored init is in a pid, mount, UTS, IPC and net namespace that
#     are none of the host's (never restored into the host's namespaces);
#   - its /proc is the container's: `ps` inside shows only its own tasks,
#     the loop is pid 1 (`echo $$`), pids from 1;
#   - its hostname, its tmpfs files, its IPC objects (ipcs inside), its
#     mqueue mount showing its queue (the container's IPC namespace's);
#   - the counter goes on from where it was.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-container: needs root"; exit 77; }
for c in unshare nsenter ipcmk python3; do
	command -v $c >/dev/null || { echo "ns-container: $c is not installed"; exit 77; }
done
BB=$(command -v busybox) && "$BB" --list >/dev/null 2>&1 ||
	{ echo "ns-container: busybox (busybox-static) is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-container: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
host=$(hostname)

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.err "$tmp/data/ps"; do
		[ -s "$f" ] && { echo "---- $f"; tail -8 "$f"; }
	done
	exit 1
}

R=$tmp/root
mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/tmp" "$R/etc" "$R/data" "$R/old" "$R/mq" "$tmp/data"
cp "$BB" "$R/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$R/bin/$a"
done
echo container >"$R/etc/name"

# The loop: pid 1 of the container; a child of its own (sleep) each round.
cat >"$R/loop.sh" <<'EOF2'
echo "deleted but open" >/tmp/ghost
exec 6</tmp/ghost 7</tmp/ghost
rm /tmp/ghost
n=0
while :; do
	n=$((n + 1))
	{ echo "pid $$"; ps -o pid,comm; } >/data/ps.new
	mv /data/ps.new /data/ps
	echo "$n $(hostname)" >/data/count.new
	mv /data/count.new /data/count
	sleep 0.05
done
EOF2
cat >"$tmp/enter.sh" <<'EOF2'
set -e
R=$1
mount --make-rprivate /
mount --bind "$R" "$R"
cd "$R"
mount -t sysfs sys sys
mount -t devtmpfs dev dev
mount -t tmpfs -o size=1m,mode=1777 tmp tmp
mkdir tmp/dir
echo "tmpfs file" >tmp/dir/file
ln -s dir/file tmp/symlink
mount --bind "$2" data
pivot_root . old
umount -l /old
mount -t proc proc /proc
mount -t mqueue mq /mq
hostname "$(cat /etc/name)"
exec /bin/setsid /bin/sh /loop.sh </dev/null >/dev/null 2>&1
EOF2

setsid unshare --fork --pid --mount --uts --ipc --net sh "$tmp/enter.sh" "$R" "$tmp/data" \
	</dev/null >"$tmp/enter.err" 2>&1 &
ush=$!
count() { cut -d' ' -f1 "$tmp/data/count" 2>/dev/null || echo 0; }
wait_more() { # wait_more N WHAT: until the count passes N
	i=0
	while [ "$(count)" -le "$1" ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$2: the loop does not count"; sleep 0.02
	done
}
wait_more 0 "start"
pid=$(pgrep -P $ush) # the container's init, unshare's child
[ -n "$pid" ] || fail "no container loop"
[ "$(grep NSpid /proc/$pid/status | awk '{ print $NF }')" = 1 ] || fail "the loop is not pid 1 inside"

# IPC objects inside, through nsenter (busybox has no ipcmk)
nsenter -t $pid -i ipcmk -M 4096 >/dev/null && nsenter -t $pid -i ipcmk -S 3 >/dev/null &&
	nsenter -t $pid -i ipcmk -Q >/dev/null || fail "ipcmk in the container"
ipcs_in() { nsenter -t $pid -i ipcs | awk '$1 ~ /^0x/ { print $1, $2, $4, $5 }'; }
# a POSIX queue too, seen in the container's own mqueue mount at /mq
nsenter -t $pid -i python3 -c 'import ctypes, os
rt = ctypes.CDLL("librt.so.1", use_errno=True)
if rt.mq_open(b"/kept", os.O_CREAT | os.O_RDWR, 0o600, None) < 0:
	raise OSError(ctypes.get_errno(), "mq_open")' || fail "mq_open in the container"
[ -e /proc/$pid/root/mq/kept ] || fail "the container's /mq does not show its queue"
ipcs_in >"$tmp/ipcs.before"
[ "$(wc -l <"$tmp/ipcs.before")" = 3 ] || fail "ipcs inside: $(cat "$tmp/ipcs.before")"
mounts() { awk '{ o = $6; for (i = 7; $i != "-"; i++) ; print $5, $(i + 1), o }' "/proc/$1/mountinfo"; }
mounts $pid >"$tmp/mounts.before"

# check WHAT: the container as it must be, before and after each restore
check() {
	[ "$(cut -d' ' -f2 "$tmp/data/count")" = container ] || fail "$1: the hostname inside is not kept"
	[ "$(hostname)" = "$host" ] || fail "$1: the host's hostname changed"
	# a fresh ps of the loop's
	rm -f "$tmp/data/ps"
	i=0
	while [ ! -s "$tmp/data/ps" ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$1: no ps from the loop"; sleep 0.02
	done
	[ "$(head -n 1 "$tmp/data/ps")" = "pid 1" ] || fail "$1: the loop is not pid 1: $(head -n 1 "$tmp/data/ps")"
	awk 'NR > 2 { print $1 }' "$tmp/data/ps" >"$tmp/ps.pids"
	[ "$(head -n 1 "$tmp/ps.pids")" = 1 ] || fail "$1: ps inside does not start at pid 1"
	# only the container's tasks: the loop, ps itself, at most a sleep
	[ "$(wc -l <"$tmp/ps.pids")" -le 3 ] || fail "$1: ps inside sees other tasks than the container's"
	awk 'NR > 2' "$tmp/data/ps" | grep -qv -e ' sh$' -e ' ps$' -e ' sleep$' -e ' mv$' &&
		fail "$1: ps inside shows a task that is not the container's"
	for k in pid mnt uts ipc net; do
		[ "$(readlink /proc/$pid/ns/$k)" != "$(readlink /proc/self/ns/$k)" ] ||
			fail "$1: pid $pid is in the host's $k namespace"
	done
	t=/proc/$pid/root/tmp
	[ "$(cat $t/dir/file)" = "tmpfs file" ] && [ "$(readlink $t/symlink)" = dir/file ] ||
		fail "$1: the container's tmpfs /tmp lost its files"
	[ "$(cat /proc/$pid/fd/6)" = "deleted but open" ] && [ "$(cat /proc/$pid/fd/7)" = "deleted but open" ] &&
		[ ! -e /proc/$pid/root/tmp/ghost ] ||
		fail "$1: the deleted file the loop holds open is lost"
	[ -e /proc/$pid/root/mq/kept ] || fail "$1: the container's mqueue mount does not show its queue"
	ipcs_in >"$tmp/ipcs.now"
	diff "$tmp/ipcs.before" "$tmp/ipcs.now" >&2 || fail "$1: the IPC objects inside differ"
	mounts $pid >"$tmp/mounts.now"
	diff "$tmp/mounts.before" "$tmp/mounts.now" >&2 || fail "$1: the mounts differ"
}
check "before the dump"

for cycle in 1 2; do
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t $pid -D "$tmp/img" --external "mnt[/data]:data" -v4 -o dump.log \
		2>"$tmp/dump.err" || { cp "$tmp/img/dump.log" "$tmp/dump.log"; fail "dump $cycle"; }
	i=0
	while kill -0 $pid 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$pid still runs after the dump"; sleep 0.02
	done
	before=$(count)
	"$CRIU_LIKE" restore -D "$tmp/img" -d --root "$R" --external "mnt[data]:$tmp/data" \
		--pidfile "$tmp/pidfile" -v4 -o restore.log 2>"$tmp/restore.err" ||
		{ cp "$tmp/img/restore.log" "$tmp/restore.log"; fail "restore $cycle"; }
	pid=$(cat "$tmp/pidfile")
	kill -0 $pid || fail "$pid is not running after restore $cycle"
	wait_more $((before + 2)) "after restore $cycle"
	after=$(count)
	[ "$after" -le $((before + 50)) ] || fail "the counter started again: $before -> $after"
	check "restore $cycle"
	echo "ok: cycle $cycle: host pid $pid, count $before -> $after, ps inside: $(awk 'NR > 2 { printf "%s %s, ", $1, $2 }' "$tmp/data/ps")"
done
kill -KILL $pid
echo "ns-container: a container in pid, mount, UTS, IPC and net namespaces, dumped and restored twice"
