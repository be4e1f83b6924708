#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# LXC (Debian 12's 5.0) with criu-like as its CRIU: lxc-checkpoint runs
# `criu --version` and then `criu dump ...` from PATH, where a `criu` link to
# criu-like (noting each call) comes first. A busybox-static container (its
# own lxcpath under a temporary directory, no network: lxc.net.0.type =
# empty, no console) counting into a bind-mounted directory. What LXC asks
# cannot all be done yet (Documentation/runtimes.md, "LXC"): checked here is
# that LXC accepts criu-like's version, runs its dump, that the dump is
# refused naming what is missing (its cgroup options, --manage-cgroups=full
# and --cgroup-root, are taken: the first refused is another one, today
# --link-remap), and that the container goes on counting as before, untouched.
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
	for f in "$tmp"/*.out "$tmp"/ck/*.log; do
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

n=$(lines)
PATH=$tmp/bin:$PATH L lxc-checkpoint -s -D "$tmp/ck" >"$tmp/ck.out" 2>&1 &&
	fail "lxc-checkpoint succeeded: update this test and Documentation/runtimes.md"
grep -qx -- '--version' "$tmp/criu-calls" 2>/dev/null || fail "LXC did not ask criu-like's version"
grep -q '^dump ' "$tmp/criu-calls" ||
	fail "LXC did not run criu-like's dump (its version refused?): $(cat "$tmp/ck.out")"
grep -q 'option --[a-z-]*: .* is not supported by this version yet' "$tmp/ck.out" ||
	fail "the dump was not refused naming an option"
grep -q 'option --\(manage-cgroups\|cgroup-root\|freeze-cgroup\)' "$tmp/ck.out" &&
	fail "a cgroup option of LXC's was refused: $(grep -o 'option --[^;]*yet' "$tmp/ck.out" | head -n1)"
[ "$(state)" = RUNNING ] || fail "after the refused checkpoint the container is '$(state)'"
[ "$(L lxc-info -p -H)" = "$pid" ] || fail "the container's init is not $pid any more"
wait_lines "$((n + 5))" "after the refused checkpoint"
[ "$(grep -c '^1$' "$tmp/data/log")" = 1 ] || fail "the container's loop started again"

echo "lxc: lxc-checkpoint ran criu-like (its version accepted), the dump was refused:" \
	"$(grep -o 'option --[^;]*yet' "$tmp/ck.out" | head -n1); the container runs on"
