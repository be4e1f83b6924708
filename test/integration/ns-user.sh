#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Containers in a user namespace of their own, dumped and restored by root,
# three times each, with --restore-detached, the third with --lazy-pages:
#  - rootless: started by uid 1000 (setpriv --clear-groups) with `unshare
#    --user --map-root-user --pid --fork --mount-proc --mount --uts --ipc`:
#    its root is host uid 1000 mapped to 0, setgroups deny, the namespace's
#    owner uid 1000 (the shape of a rootless podman container);
#  - rootful: started by root, a user namespace whose maps "0 100000 65536"
#    root writes from outside (setgroups allow), then the same unshare of the
#    other namespaces and a network namespace, and a second task of uid and gid 1000 inside with the
#    groups 1000 and 2000 and no capabilities; a persistent tap in its network namespace owned
#    by its uid 1000 and gid 2000 (host 101000 and 102000: the same from both sides after).
# Each mounts a tmpfs on /mnt inside and creates a file there, owned by its
# uid 0 (rootless) or 1000 (rootful); each task writes what it sees every
# 50 ms: its pid, `id`, its uid_map, gid_map and setgroups, the hostname set
# inside, `ls -ln` of the file. After each restore that view is the same
# (ids, maps, setgroups, hostname, the file's owner inside, the pids inside),
# the loops go on, the host sees the file owned by the host ids, the tasks'
# host uids are the same, the owner uid of the new user namespace is, and the
# root's user namespace is not the host's and owns its pid, mount, UTS and
# IPC namespaces (and network, rootful). The lazy restore: the tasks make
# their uffd through the controller's /dev/userfaultfd (userfaultfd() is
# denied in their user namespace), the daemon serves them and exits 0, no
# task keeps a uffd or the device; without the device (an empty file bound
# read-only over it) it is refused before anything is created, naming the root
# (Documentation/lazy-pages.md). Restores of the rootless one killed
# at each step leave nothing behind.
#
# The container is started in a mount namespace prepared for it (a bind of
# the host's / alone and a proc, pivot_root'ed into): a user namespace's
# mount namespace is a copy of its creator's, and the host's cgroup v1 mounts
# are not dumped (ns-refused.sh).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-user: needs root"; exit 77; }
for c in unshare setpriv pivot_root python3; do
	command -v $c >/dev/null || { echo "ns-user: $c is not installed"; exit 77; }
done
[ -x "$CRIU_LIKE" ] || { echo "ns-user: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'pkill -KILL -f "$tmp/see.sh" 2>/dev/null; sleep 0.1; rm -rf "$tmp"' EXIT
checks=0

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.out "$tmp"/img*/*.log; do
		[ -s "$f" ] && { echo "---- $f"; grep -E "Error|Warn" "$f" | tail -8; tail -3 "$f"; }
	done
	exit 1
}

# outer.sh DIR CMD...: a fresh mount namespace, pivot_root'ed into a bind of / with a proc;
# CMD without the caller's fds but 0, 1 and 2.
cat >"$tmp/outer.sh" <<'EOF'
set -e
R=$1/root
shift
mkdir -p "$R"
mount --make-rprivate /
mount --bind / "$R"
mount -t proc proc "$R/proc"
cd "$R"
pivot_root . .
umount -l .
cd /
# nothing of the caller's beyond stdio (a /dev/null opened outside is refused at dump)
exec python3 -c 'import os, sys; os.closerange(3, 65536); os.execvp(sys.argv[1], sys.argv[1:])' "$@"
EOF

# userns.py CMD...: a user namespace whose maps are written from outside, then root in it.
cat >"$tmp/userns.py" <<'EOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
    sys.exit("unshare: %s" % os.strerror(ctypes.get_errno()))
for m in ("uid_map", "gid_map"):
    while not open("/proc/self/" + m).read().strip():
        time.sleep(0.01)
os.setgroups([])
os.setresgid(0, 0, 0)
os.setresuid(0, 0, 0)
os.execvp(sys.argv[1], sys.argv[1:])
EOF

# ctr.sh DIR OWNER [child]: the container's init (pid 1), with a task of uid 1000 for "child".
cat >"$tmp/ctr.sh" <<'EOF'
hostname ctr-user
mount -t tmpfs -o size=1m,mode=1777 ctr /mnt
# not unshare's output file: unshare writes to it when its child goes with the dump
exec >/mnt/ctr.out 2>&1
echo data >/mnt/file
chown "$2" /mnt/file
if [ "${3:-}" = child ]; then
	setpriv --reuid=1000 --regid=1000 --groups=1000,2000 --inh-caps=-all \
		--bounding-set=-all sh "$1/see.sh" child &
fi
exec sh "$1/see.sh" root
EOF

# see.sh NAME: every 50 ms, what this task sees, into /mnt/NAME (renamed into place).
cat >"$tmp/see.sh" <<'EOF'
n=0
while :; do
	n=$((n + 1))
	{ echo "pid $$"; id; cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups
	  hostname; ls -ln /mnt/file; } >"/mnt/$1.new"
	mv "/mnt/$1.new" "/mnt/$1"
	echo $n >"/mnt/$1.count.new"
	mv "/mnt/$1.count.new" "/mnt/$1.count"
	sleep 0.05
done
EOF

# wait_file F: until F exists (10 s).
wait_file() {
	i=0
	while ! [ -s "$1" ]; do
		i=$((i + 1))
		[ $i -gt 500 ] && fail "$1 never appeared"
		sleep 0.02
	done
}

# owner_ino PID KIND: the inode of the user namespace owning /proc/PID/ns/KIND (NS_GET_USERNS).
owner_ino() {
	python3 -c 'import fcntl, os, sys
fd = os.open("/proc/%s/ns/%s" % (sys.argv[1], sys.argv[2]), os.O_RDONLY)
print(os.fstat(fcntl.ioctl(fd, 0xb701)).st_ino)' "$1" "$2"
}

# owner_uid PID: the owner uid of PID's user namespace (NS_GET_OWNER_UID).
owner_uid() {
	python3 -c 'import fcntl, os, struct, sys
fd = os.open("/proc/%s/ns/user" % sys.argv[1], os.O_RDONLY)
b = bytearray(4)
fcntl.ioctl(fd, 0xb704, b)
print(struct.unpack("I", b)[0])' "$1"
}

# state PID: what is compared before the dump and after the restore (host pids left out).
state() {
	cat "/proc/$1/root/mnt/root"
	[ -s "/proc/$1/root/mnt/child" ] && cat "/proc/$1/root/mnt/child"
	stat -c "file %u:%g" "/proc/$1/root/mnt/file"
	awk '/^(Uid|Gid|Groups):/' "/proc/$1/status"
	echo "owner $(owner_uid "$1")"
	# a tap's owner and group: the host's ids from outside, the container's from inside
	if nsenter --net="/proc/$1/ns/net" ip link show tpu0 >/dev/null 2>&1; then
		echo "tap host $(nsenter --net="/proc/$1/ns/net" ip -d link show tpu0 | grep -o 'user [^ ]* group [^ ]*')"
		echo "tap inside $(nsenter --user="/proc/$1/ns/user" --net="/proc/$1/ns/net" ip -d link show tpu0 | grep -o 'user [^ ]* group [^ ]*')"
	fi
	# the see.sh child: not a sleep or an mv, nor the root's loop forked and not yet exec'ing
	# one (its cmdline is still "sh .../see.sh root")
	for t in $(cat "/proc/$1/task/$1/children"); do
		tr '\0' ' ' <"/proc/$t/cmdline" 2>/dev/null | grep -q "see.sh child" || continue
		awk '/^(Uid|Gid|Groups|NSpid|CapEff):/' "/proc/$t/status" | sed "s/$t/CHILD/"
	done
}

# going NAME PID: the loops of the container PID go on.
going() {
	for f in root child; do
		[ -s "/proc/$2/root/mnt/$f.count" ] || continue
		c=$(cat "/proc/$2/root/mnt/$f.count")
		i=0
		while [ "$(cat "/proc/$2/root/mnt/$f.count")" -le $((c + 3)) ]; do
			i=$((i + 1))
			[ $i -gt 250 ] && fail "$1: the $f loop stopped at round $c"
			sleep 0.02
		done
	done
}

# lazy_refused NAME: with vm.unprivileged_userfaultfd=0 and no /dev/userfaultfd to open (a
# read-only bind of an empty file over it, in a mount namespace of criu-like's own), the tasks
# in the container's user namespace could not make their uffd: the lazy restore is refused
# before anything is created, naming the root (pid 1 of the images).
lazy_refused() {
	[ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" = 0 ] || return 0
	out=$(unshare --mount --propagation private sh -c 'mount --bind "$0" /dev/userfaultfd &&
		mount -o remount,bind,ro /dev/userfaultfd && exec "$@"' "$tmp/in" \
		"$CRIU_LIKE" restore --lazy-pages -D "$img" -d -v4 -o restore-refused.log 2>&1) &&
		fail "$1: a lazy restore without /dev/userfaultfd was not refused"
	echo "$out" | grep -q "pid 1: in a user namespace of its tree's own.*/dev/userfaultfd" ||
		fail "$1: the refusal of a lazy restore without /dev/userfaultfd says: $out"
	! pgrep -f "$tmp/see.sh" >/dev/null || fail "$1: the refused lazy restore left a task"
	checks=$((checks + 1))
	echo "ok: $1: without /dev/userfaultfd, refused: $(echo "$out" | grep -o "pid 1: in a.*")"
}

# lazy_done NAME: the lazy-pages daemon $lp served the tree's faults and exited 0 once every
# page was in (30 s); no task of the container holds a uffd or /dev/userfaultfd.
lazy_done() {
	for t in $(pgrep -f "$tmp/see.sh"); do
		! ls -l "/proc/$t/fd/" 2>/dev/null | grep -q userfaultfd ||
			fail "$1: task $t holds $(ls -l "/proc/$t/fd/" | grep userfaultfd)"
	done
	i=0
	while kill -0 "$lp" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 1500 ] && fail "$1: the lazy-pages daemon never ended"
		sleep 0.02
	done
	wait "$lp" || fail "$1: the lazy-pages daemon exited $?"
	grep -q "lazy-pages: [1-9][0-9]* tasks, .* ([1-9][0-9]* faults" "$img/lazy.log" ||
		fail "$1: lazy-pages served no fault: $(tail -1 "$img/lazy.log")"
	echo "ok: $1: $(grep -o "lazy-pages: [1-9][0-9]* tasks, .*" "$img/lazy.log")"
}

# cycle NAME N [lazy]: dump the container's init $pid, restore it detached (with --lazy-pages
# and a lazy-pages daemon for "lazy"): $pid is the new one.
cycle() {
	name=$1 n=$2
	before=$(state "$pid")
	img="$tmp/img-$name-$n"
	mkdir -p "$img"
	"$CRIU_LIKE" dump -t "$pid" -D "$img" -v4 -o dump.log || fail "$name: dump $n failed"
	# killed: gone, or a zombie until its parent (the subreaper, after a -d restore) reaps it
	st=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
	[ -z "$st" ] || [ "$st" = Z ] || fail "$name: pid $pid still runs after its dump ($st)"
	if [ "${3:-}" = lazy ]; then
		lazy_refused "$name"
		# the background copy 100 ms late, as zdtm's mode lazy: the loops fault pages in first;
		# -D relative to $tmp: the restore opens the directory of the daemon's socket before it
		# enters the container's mount namespace, where that path names nothing
		rel=${img#"$tmp"/}
		(cd "$tmp" && CRIU_LIKE_LAZY_PREFETCH_DELAY_MS=100 exec "$CRIU_LIKE" lazy-pages \
			-D "$rel" -v4 --timeout 30 -o lazy.log) &
		lp=$!
		(cd "$tmp" && exec "$CRIU_LIKE" restore --lazy-pages -D "$rel" -d \
			--pidfile "$img/pid" -v4 -o restore.log) || fail "$name: lazy restore $n failed"
	else
		"$CRIU_LIKE" restore -D "$img" -d --pidfile "$img/pid" -v4 -o restore.log ||
			fail "$name: restore $n failed"
	fi
	pid=$(cat "$img/pid")
	going "$name" "$pid"
	[ "${3:-}" = lazy ] && lazy_done "$name"
	after=$(state "$pid")
	[ "$before" = "$after" ] || fail "$name: after restore $n, the container sees
$after
where it saw
$before"
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ] ||
		fail "$name: restored into the host's user namespace"
	u=$(stat -L -c %i "/proc/$pid/ns/user")
	for k in $kinds; do
		[ "$(readlink "/proc/$pid/ns/$k")" != "$(readlink "/proc/self/ns/$k")" ] ||
			fail "$name: restored into the host's $k namespace"
		[ "$(owner_ino "$pid" $k)" = "$u" ] ||
			fail "$name: its $k namespace is not owned by its user namespace user:[$u]"
	done
	checks=$((checks + 1))
	echo "ok: $name: restore $n: pid $pid in $(readlink "/proc/$pid/ns/user"), which owns its $(echo $kinds | tr ' ' ,) namespaces; inside: $(sed -n 2p "/proc/$pid/root/mnt/root"), uid_map $(sed -n 3p "/proc/$pid/root/mnt/root" | tr -s ' '), setgroups $(sed -n 5p "/proc/$pid/root/mnt/root"), $(sed -n 6p "/proc/$pid/root/mnt/root")"
}

# run NAME FILE-OWNER UID [child]: the container $pid checked, dumped and restored twice.
run() {
	name=$1 file_owner=$2 uid=$3
	wait_file "/proc/$pid/root/mnt/root.count"
	[ -n "${4:-}" ] && wait_file "/proc/$pid/root/mnt/child.count"
	st=$(state "$pid")
	echo "$st" | grep -q "^file $file_owner\$" || fail "$name: the file is not $file_owner: $st"
	echo "$st" | grep -q "^Uid:	$uid	$uid	$uid	$uid\$" || fail "$name: not uid $uid: $st"
	grep -qx "pid 1" "/proc/$pid/root/mnt/root" || fail "$name: its init is not pid 1 inside"
	cycle "$name" 1
	cycle "$name" 2
	cycle "$name" 3 lazy
	[ "$name" = rootless ] && killed_restores
	kill -KILL "$pid"
}

# killed_restores: dumped once more, restores killed at their N-th step (CRIU_LIKE_FAULT_STEP,
# as restore-kill.sh) leave no task of the container and no helper of criu-like's; the first
# that is not killed restores it ($pid).
killed_restores() {
	img="$tmp/img-killed"
	mkdir -p "$img"
	"$CRIU_LIKE" dump -t "$pid" -D "$img" -v4 -o dump.log || fail "killed restores: dump"
	for n in 1 2 3 5 8 13 21 34 55 89 144 233 377 610 987; do
		CRIU_LIKE_FAULT_STEP=$n "$CRIU_LIKE" restore -D "$img" -d --pidfile "$img/pid" \
			-v4 -o restore.log >/dev/null 2>&1 && break
		i=0
		while pgrep -f "$tmp/see.sh" >/dev/null || pgrep -f "restore -D $img" >/dev/null; do
			i=$((i + 1))
			[ $i -gt 250 ] && fail "killed restores: step $n left a task or a helper behind"
			sleep 0.02
		done
	done
	pid=$(cat "$img/pid")
	going "killed restores" "$pid"
	checks=$((checks + 1))
	echo "ok: $name: restores killed at each fault step before $n left nothing behind; at $n (past the last) it was restored"
}

# started NAME UNSHARE-PID: $pid, the container's init: the child of that unshare, once it
# runs see.sh (before, the outer namespace's mount and umount are its children too).
started() {
	i=0
	until pid=$(pgrep -P "$2" -f "$tmp/see.sh root") && [ -n "$pid" ]; do
		i=$((i + 1))
		[ $i -gt 500 ] && fail "$1: the container never started"
		sleep 0.02
	done
}

: >"$tmp/in"
cd "$tmp" || exit 1
# rootless: uid 1000 makes every namespace
setsid unshare --mount sh "$tmp/outer.sh" "$tmp" setpriv --reuid=1000 --regid=1000 \
	--clear-groups unshare --user --map-root-user --pid --fork --mount-proc --mount --uts \
	--ipc setsid sh "$tmp/ctr.sh" "$tmp" 0:0 <"$tmp/in" >"$tmp/rootless.out" 2>&1 &
started rootless $!
kinds="pid mnt uts ipc"
run rootless 1000:1000 1000

# rootful: root makes the user namespace, writes its maps, then the other namespaces
setsid unshare --mount sh "$tmp/outer.sh" "$tmp" python3 "$tmp/userns.py" unshare --pid \
	--fork --mount-proc --mount --uts --ipc --net setsid sh "$tmp/ctr.sh" "$tmp" 1000:1000 child \
	<"$tmp/in" >"$tmp/rootful.out" 2>&1 &
u=$!
i=0
until [ "$(readlink "/proc/$u/ns/user")" != "$(readlink /proc/self/ns/user)" ]; do
	i=$((i + 1))
	[ $i -gt 250 ] && fail "rootful: no user namespace"
	sleep 0.02
done
echo "0 100000 65536" >"/proc/$u/uid_map" || fail "rootful: cannot write its uid_map"
echo "0 100000 65536" >"/proc/$u/gid_map" || fail "rootful: cannot write its gid_map"
started rootful "$u"
# a persistent tap of the container's, owned by its uid 1000 and gid 2000 (host 101000, 102000)
nsenter --net="/proc/$pid/ns/net" ip tuntap add tpu0 mode tap user 101000 group 102000 ||
	fail "rootful: cannot add a tap to its network namespace"
# (ip names them when the host has names for them)
u1000=$(getent passwd 1000 | cut -d: -f1)
g2000=$(getent group 2000 | cut -d: -f1)
state "$pid" | grep -q "^tap inside user ${u1000:-1000} group ${g2000:-2000}$" ||
	fail "rootful: its tap is not owned by 1000:2000 inside: $(state "$pid" | grep tap)"
kinds="pid mnt uts ipc net"
run rootful 101000:101000 100000 child
echo "ns-user: $checks restores of containers in user namespaces of their own"
