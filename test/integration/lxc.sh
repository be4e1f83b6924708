#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# LXC (Debian 12's 5.0) with criu-like as its CRIU: lxc-checkpoint runs
# `criu --version`, `criu dump ...` and `criu restore ...` from PATH, where a
# `criu` wrapper of criu-like (noting each call) comes first. A busybox-static
# container (its own lxcpath under a temporary directory, no network:
# lxc.net.0.type = empty, no console) counting into a bind-mounted directory
# (Documentation/runtimes.md, "LXC"): lxc-checkpoint -s then -r, the count
# going on from the dumped value, the init pid 1 with its child, the hostname
# kept; then lxc-checkpoint without -s (left running), lxc-stop and -r from
# those images.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "lxc: needs root"; exit 77; }
for p in lxc-start lxc-stop lxc-info lxc-checkpoint; do
	command -v $p >/dev/null ||
		{ echo "lxc: $p is not installed (lxc: scripts/install-deps.sh)"; exit 77; }
done
BB=$(command -v busybox) && "$BB" --list >/dev/null 2>&1 ||
	{ echo "lxc: busybox (busybox-static) is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "lxc: build first ($CRIU_LIKE)"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d /tmp/criu-like-lxc.XXXXXX)
name=criu-like-lxc-$$
# LXC's shared lxc.pivot cgroups (made when a container stops): removed at the
# end unless they were there before
pivot=
[ -d /sys/fs/cgroup/freezer/lxc.pivot ] || [ -d /sys/fs/cgroup/lxc.pivot ] || pivot=1
L() { cmd=$1; shift; "$cmd" -P "$tmp" -n "$name" "$@"; }
cleanup() {
	L lxc-stop -k >/dev/null 2>&1
	awk -v t="$tmp/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m"; done
	# the cgroups LXC made for the container and its monitor, deepest first
	for d in /sys/fs/cgroup/lxc.*"$name"* /sys/fs/cgroup/*/lxc.*"$name"*; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	[ -n "$pivot" ] && rmdir /sys/fs/cgroup/lxc.pivot /sys/fs/cgroup/*/lxc.pivot 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.out "$tmp"/ck*/*.log; do
		[ -s "$f" ] && { echo "---- $f"; grep -a -m5 -e Error -e ERROR "$f"; tail -5 "$f"; }
	done
	exit 1
}

R=$tmp/$name/rootfs
mkdir -p "$R/bin" "$R/data" "$R/proc" "$R/sys" "$R/dev" "$tmp/data" "$tmp/bin"
cp "$BB" "$R/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$R/bin/$a"
done
printf 'sleep 100000 &\nn=0\nwhile :; do n=$((n + 1)); echo $n >>/data/log; sleep 0.02; done\n' \
	>"$R/loop.sh"
cat >"$tmp/$name/config" <<EOF
lxc.uts.name = lxcbox
lxc.rootfs.path = dir:$R
lxc.net.0.type = empty
lxc.console.path = none
lxc.tty.max = 0
lxc.pty.max = 0
lxc.autodev = 1
lxc.mount.auto = proc:mixed sys:ro
lxc.mount.entry = $tmp/data data none rw,bind 0 0
lxc.apparmor.profile = unconfined
lxc.init.cmd = /bin/sh /loop.sh
EOF
printf '#!/bin/sh\necho "$*" >>%s/criu-calls\nexec %s "$@"\n' "$tmp" "$CRIU_LIKE" >"$tmp/bin/criu"
chmod +x "$tmp/bin/criu"

lines() { { wc -l <"$tmp/data/log"; } 2>/dev/null || echo 0; }
wait_lines() { # wait_lines N WHAT: until the log has more than N lines
	i=0
	while [ "$(lines)" -le "$1" ]; do
		i=$((i + 1)); [ $i -gt 300 ] && fail "$2: the loop does not count"; sleep 0.02
	done
}
state() { L lxc-info -s 2>/dev/null | awk '{ print $2 }'; }

if ! L lxc-start -d -l DEBUG -o "$tmp/start.log" >"$tmp/start.out" 2>&1 ||
	[ "$(state)" != RUNNING ]; then
	why=$(grep -a -m1 ERROR "$tmp/start.log" | sed 's/.* - //')
	echo "lxc: LXC cannot run a busybox container here: ${why:-$(tail -n1 "$tmp/start.out")}"
	exit 77
fi
wait_lines 5 "start"
pid=$(L lxc-info -p -H)

ck() { # ck DIR [-s]: checkpoint into DIR
	d=$1; shift
	PATH=$tmp/bin:$PATH L lxc-checkpoint "$@" -D "$d" >"$d.out" 2>&1 ||
		fail "lxc-checkpoint $* -D $d: $(tail -n3 "$d.out")"
}
rst() { # rst DIR: restore from DIR, the container running again
	PATH=$tmp/bin:$PATH L lxc-checkpoint -r -D "$1" >"$1-r.out" 2>&1 ||
		fail "lxc-checkpoint -r -D $1: $(tail -n3 "$1-r.out")"
	[ "$(state)" = RUNNING ] || fail "after the restore from $1 the container is '$(state)'"
}
# the restored container: its init is the loop, pid 1 of its pid namespace, the hostname kept
check_init() {
	p=$(L lxc-info -p -H)
	[ -n "$p" ] && [ -d "/proc/$p" ] || fail "$1: LXC gives no init pid ($p)"
	grep -q '^NSpid:.*[[:space:]]1$' "/proc/$p/status" ||
		fail "$1: the init $p is not pid 1 of its namespace: $(grep NSpid "/proc/$p/status")"
	tr '\0' ' ' <"/proc/$p/cmdline" | grep -q '^/bin/sh /loop.sh' ||
		fail "$1: the init $p is '$(tr '\0' ' ' <"/proc/$p/cmdline")'"
	[ "$(nsenter -t "$p" -u hostname)" = lxcbox ] || fail "$1: hostname not kept"
	pgrep -P "$p" -f '^sleep 100000' >/dev/null || fail "$1: the init's sleep child is gone"
}
# after a restore: the log goes on from $1 (the last value dumped), not from 1
goes_on() {
	wait_lines "$2" "$3"
	next=$(sed -n "$(($2 + 1))p" "$tmp/data/log")
	[ "$next" = $(($1 + 1)) ] ||
		fail "$3: the first value after the restore is '$next', not $(($1 + 1))"
	[ "$(grep -c '^1$' "$tmp/data/log")" = 1 ] || fail "$3: the loop started again"
}

# 1. -s: dumped and stopped, then restored
ck "$tmp/ck1" -s
grep -qx -- '--version' "$tmp/criu-calls" || fail "LXC did not ask criu-like's version"
[ "$(state)" = STOPPED ] || fail "after lxc-checkpoint -s the container is '$(state)'"
n=$(lines)
last=$(tail -n1 "$tmp/data/log")
[ "$last" = "$n" ] || fail "the log's last value $last is not its line count $n"
rst "$tmp/ck1"
[ "$(L lxc-info -p -H)" != "$pid" ] || fail "the restored init has the dumped host pid"
check_init "restore -s"
goes_on "$last" "$n" "restore after -s"
grep -q '^restore .*--restore-sibling' "$tmp/criu-calls" || fail "LXC gave no --restore-sibling"

# 2. without -s: the container goes on (LXC gives --leave-running), stopped, restored
pid=$(L lxc-info -p -H)
before=$(lines)
ck "$tmp/ck2"
grep -q '^dump .*--leave-running' "$tmp/criu-calls" || fail "LXC gave no --leave-running"
[ "$(state)" = RUNNING ] && [ "$(L lxc-info -p -H)" = "$pid" ] ||
	fail "after lxc-checkpoint without -s the container is '$(state)', init $(L lxc-info -p -H)"
at=$(lines)
wait_lines "$((at + 5))" "after the checkpoint left running"
L lxc-stop -k >/dev/null 2>&1 || fail "lxc-stop of the restored container failed"
[ "$(state)" = STOPPED ] || fail "after lxc-stop the container is '$(state)'"
m=$(lines)
rst "$tmp/ck2"
check_init "restore of the checkpoint left running"
wait_lines "$m" "restore of the checkpoint left running"
next=$(sed -n "$((m + 1))p" "$tmp/data/log")
[ "$next" -gt "$before" ] && [ "$next" -le "$((at + 1))" ] ||
	fail "after the second restore the loop wrote '$next', not a value of the dump's" \
		"(after $before, up to $((at + 1)))"
wait_lines "$((m + 3))" "after the second restore"
[ "$(sed -n "$((m + 3))p" "$tmp/data/log")" = $((next + 2)) ] ||
	fail "after the second restore the loop does not count on from $next"
L lxc-stop -k >/dev/null 2>&1 && [ "$(state)" = STOPPED ] ||
	fail "the restored container does not stop: '$(state)'"

echo "lxc: lxc-checkpoint -s then -r: the container counts on from $last (init pid 1, hostname" \
	"kept); lxc-checkpoint without -s left it running, and its images restored it at $next"
