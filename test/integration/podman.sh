#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# podman (Debian 12's 4.3.1, runc 1.1.5 as its runtime) with criu-like as its
# CRIU: a `criu` link to criu-like first in PATH, for podman (which asks the
# version through RPC) and for conmon (which runs `runc restore`). Everything
# podman makes lives in a private store (--root, --runroot, --tmpdir) under a
# temporary directory: an image imported from a busybox-static tarball (no
# registry), three containers:
#   (a) --network none, a loop counting on its stdout: `checkpoint
#       --leave-running` (it goes on), `checkpoint` (it stops), `restore` (the
#       first value it prints is the dumped one + 1, its processes keep their
#       pids), `checkpoint --export`, `rm`, `restore --import --name`;
#   (b) the same on podman's default bridge network: podman gives runc a
#       network namespace of its own making (runc: --external net[INO] at
#       dump, --inherit-fd fd[N]:extRootNetNS at restore); the restored
#       container has its address back;
#   (c) a TCP server in a bridged container and a client in the host,
#       connected to the container's address: `checkpoint --tcp-established`,
#       `restore --tcp-established`, then the same connection carries data
#       both ways and the server's count goes on;
# and `checkpoint --pre-checkpoint` (runc's --pre-dump) then `checkpoint
# --with-previous` (--parent-path) of a container on no network.
# Documentation/runtimes.md ("podman") has the recipe.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "podman: needs root"; exit 77; }
command -v podman >/dev/null ||
	{ echo "podman: podman is not installed (scripts/install-deps.sh installs it)"; exit 77; }
command -v runc >/dev/null || { echo "podman: runc is not installed"; exit 77; }
BB=$(command -v busybox) && "$BB" --list >/dev/null 2>&1 ||
	{ echo "podman: busybox (busybox-static) is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "podman: python3 is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "podman: build first ($CRIU_LIKE)"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d /tmp/criu-like-podman.XXXXXX)
img=localhost/criu-like-podman-test:$$
client=
P() { podman --root "$tmp/root" --runroot "$tmp/run" --tmpdir "$tmp/libpod" "$@"; }
cleanup() {
	[ -n "$client" ] && kill "$client" 2>/dev/null
	P rm -a -f -t 0 >/dev/null 2>&1
	P rmi -a -f >/dev/null 2>&1
	# the store's overlay mounts, deepest first
	awk -v t="$tmp/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m"; done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.out $(find "$tmp/root" -name '*.log' -path '*userdata*' 2>/dev/null); do
		[ -s "$f" ] && { echo "---- $f"; grep -a -m5 Error "$f"; tail -5 "$f"; }
	done
	exit 1
}

# criu-like as `criu`, for podman and for conmon (podman gives conmon a fixed
# PATH: conmon_env_vars); podman's default limits are above this machine's
# hard ones (runc fails to set them): containers get smaller ones
mkdir -p "$tmp/bin" "$tmp/rootfs/bin"
ln -s "$CRIU_LIKE" "$tmp/bin/criu"
PATH=$tmp/bin:$PATH
export PATH
cat >"$tmp/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
conmon_env_vars = ["PATH=$PATH"]
EOF
CONTAINERS_CONF=$tmp/containers.conf
export CONTAINERS_CONF

# the image: busybox-static and its applets, imported from a tarball
cp "$BB" "$tmp/rootfs/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$tmp/rootfs/bin/$a"
done
tar -C "$tmp/rootfs" -cf "$tmp/rootfs.tar" . || fail "tar of the rootfs"
P import "$tmp/rootfs.tar" "$img" >"$tmp/import.out" 2>&1 || fail "podman import"

# run OUT CMD...: a podman command, its output in $tmp/OUT.out
run() {
	out=$1
	shift
	P "$@" >"$tmp/$out.out" 2>&1
}
status() { P inspect -f '{{.State.Status}}' "$1" 2>/dev/null; }
last() { P logs "$1" 2>/dev/null | tail -n1; }
# wait_past C N WHAT: until container C has printed a value above N
wait_past() {
	i=0
	while [ "$(last "$1" || echo 0)" -le "$2" ] 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 300 ] && fail "$3: $1 does not count (last: $(last "$1"))"
		sleep 0.05
	done
}
# the pids of the container's lasting processes: its init, a long sleep
pids() {
	P exec "$1" ps -o pid,args | awk '$1 == 1 || $3 == "100000" { print $1 }' | sort -n |
		tr '\n' ' '
}
# first_after C N: the first value C printed after N (its log holds every line)
first_after() { P logs "$1" 2>/dev/null | awk -v n="$2" 'f { print; exit } $1 == n { f = 1 }'; }

LOOP='for i in 1 2 3 4 5 6 7; do true & done; sleep 100000 & n=0; while :; do n=$((n + 1)); echo $n; sleep 0.05; done'

# counter C NETWORK: checkpoint --leave-running, checkpoint, restore of a counting container
counter() {
	c=$1
	run "$c-run" run -d --name "$c" --network "$2" "$img" sh -c "$LOOP" || fail "$c: podman run"
	wait_past "$c" 5 "$c: start"
	before=$(pids "$c")
	ip=$(P inspect -f '{{.NetworkSettings.IPAddress}}' "$c")

	run "$c-ck1" container checkpoint --leave-running "$c" ||
		fail "$c: podman container checkpoint --leave-running"
	[ "$(status "$c")" = running ] ||
		fail "$c: after checkpoint --leave-running the container is '$(status "$c")'"
	n=$(last "$c")
	wait_past "$c" "$n" "$c: after checkpoint --leave-running"

	run "$c-ck2" container checkpoint "$c" || fail "$c: podman container checkpoint"
	[ "$(status "$c")" = exited ] || fail "$c: after checkpoint it is '$(status "$c")'"
	old=$(last "$c")
	sleep 0.2
	[ "$(last "$c")" = "$old" ] || fail "$c: it goes on counting after checkpoint"

	run "$c-rst" container restore "$c" || fail "$c: podman container restore"
	[ "$(status "$c")" = running ] || fail "$c: after restore it is '$(status "$c")'"
	wait_past "$c" "$old" "$c: after restore"
	first=$(first_after "$c" "$old")
	[ "$first" = $((old + 1)) ] || fail "$c: the count started again: $old, then $first"
	after=$(pids "$c")
	[ "$after" = "$before" ] || fail "$c: its processes were '$before', now '$after'"
	if [ -n "$ip" ]; then
		now=$(P inspect -f '{{.NetworkSettings.IPAddress}}' "$c")
		[ "$now" = "$ip" ] || fail "$c: its address was $ip, now '$now'"
		P exec "$c" ip addr show eth0 | grep -q "inet $ip/" ||
			fail "$c: eth0 inside has not $ip: $(P exec "$c" ip addr show eth0)"
	fi
	echo "$c (--network $2): $old at the checkpoint, $first after, pids $after kept${ip:+, address $ip}"
}

counter none-c none
counter bridge-c bridge

# --export to a tarball, rm, --import under a new name
c=none-c
run export container checkpoint --export "$tmp/ck.tar.gz" "$c" ||
	fail "podman container checkpoint --export"
old=$(last "$c")
run rm rm "$c" || fail "podman rm after the export"
run import container restore --import "$tmp/ck.tar.gz" --name imported-c ||
	fail "podman container restore --import"
[ "$(status imported-c)" = running ] || fail "imported: it is '$(status imported-c)'"
wait_past imported-c "$old" "imported"
# podman carries the container's log in the tarball: the count goes on after its last line
[ "$(P logs imported-c | sed -n 1p)" = 1 ] && first=$(first_after imported-c "$old") ||
	first=$(P logs imported-c | sed -n 1p)
[ "$first" = $((old + 1)) ] || fail "imported: the count started again: $old, then $first"
P exec imported-c cat /proc/1/cmdline | grep -q 100000 || fail "imported: not the same init"
echo "export/import: $old at the export, $first first in the imported container"

# a pre-checkpoint (runc checkpoint --pre-dump: the container runs on), then
# a checkpoint with it as parent (--parent-path ../pre-checkpoint)
c=pre-c
run pre-run run -d --name "$c" --network none "$img" sh -c "$LOOP" || fail "$c: podman run"
wait_past "$c" 5 "$c: start"
run pre-ck1 container checkpoint --pre-checkpoint "$c" ||
	fail "$c: podman container checkpoint --pre-checkpoint"
[ "$(status "$c")" = running ] || fail "$c: after the pre-checkpoint it is '$(status "$c")'"
n=$(last "$c")
wait_past "$c" "$n" "$c: after the pre-checkpoint"
run pre-ck2 container checkpoint --with-previous "$c" ||
	fail "$c: podman container checkpoint --with-previous"
old=$(last "$c")
run pre-rst container restore --keep "$c" || fail "$c: podman container restore"
wait_past "$c" "$old" "$c: after restore"
first=$(first_after "$c" "$old")
[ "$first" = $((old + 1)) ] || fail "$c: the count started again: $old, then $first"
ud=$tmp/root/overlay-containers/$(P inspect -f '{{.Id}}' "$c")/userdata
[ "$(readlink "$ud/checkpoint/parent")" = ../pre-checkpoint ] ||
	fail "$c: the checkpoint has no parent: $(ls -l "$ud/checkpoint" | head -3)"
echo "$c: pre-checkpoint, then checkpoint --with-previous: $old at the checkpoint, $first after"

# (c) a TCP server in the container, its client in the host
c=tcp-c
run tcp-run run -d --name "$c" "$img" nc -l -p 5000 -e sh -c \
	'n=0; while read -r l; do n=$((n + 1)); echo "$n $l"; done' || fail "$c: podman run"
ip=$(P inspect -f '{{.NetworkSettings.IPAddress}}' "$c")
[ -n "$ip" ] || fail "$c: no address"
: >"$tmp/cmd"
: >"$tmp/replies"
python3 - "$ip" "$tmp/cmd" "$tmp/replies" >"$tmp/client.out" 2>&1 <<'EOF' &
# one connection; each line appended to CMD is sent, its reply appended to REPLIES
import socket, sys, time
for i in range(100):
    try:
        s = socket.create_connection((sys.argv[1], 5000), timeout=2)
        break
    except OSError:
        time.sleep(0.05)
s.settimeout(60)
f = s.makefile('rw')
done = 0
while True:
    lines = open(sys.argv[2]).read().splitlines()
    for cmd in lines[done:]:
        f.write(cmd + '\n')
        f.flush()
        r = f.readline()
        open(sys.argv[3], 'a').write(r if r else 'EOF\n')
        if not r:
            sys.exit(1)
    done = len(lines)
    time.sleep(0.05)
EOF
client=$!
reply() { # reply N: wait for the N-th reply
	i=0
	while [ "$(wc -l <"$tmp/replies" 2>/dev/null || echo 0)" -lt "$1" ]; do
		i=$((i + 1)); [ $i -gt 1200 ] && fail "$c: no reply $1 from the server"
		kill -0 "$client" 2>/dev/null || fail "$c: the client is gone: $(cat "$tmp/client.out")"
		sleep 0.05
	done
	sed -n "$1p" "$tmp/replies"
}
echo one >>"$tmp/cmd"
[ "$(reply 1)" = "1 one" ] || fail "$c: before: '$(reply 1)'"
before=$(pids "$c")
run tcp-ck container checkpoint --tcp-established "$c" ||
	fail "$c: podman container checkpoint --tcp-established"
[ "$(status "$c")" = exited ] || fail "$c: after checkpoint it is '$(status "$c")'"
run tcp-rst container restore --tcp-established "$c" ||
	fail "$c: podman container restore --tcp-established"
echo two >>"$tmp/cmd"
[ "$(reply 2)" = "2 two" ] || fail "$c: after restore the reply is '$(reply 2)'"
after=$(pids "$c")
[ "$after" = "$before" ] || fail "$c: its processes were '$before', now '$after'"
echo "$c: a client in the host at $ip:5000 kept its connection: '$(reply 1)', then '$(reply 2)'"

kill "$client"
client=
echo "podman: checkpoint/restore (--leave-running, --export/--import, --pre-checkpoint," \
	"--tcp-established) of containers on no network and on the default bridge with criu-like"
