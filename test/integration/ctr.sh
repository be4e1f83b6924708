#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# containerd (Debian 12's 1.6, its runc v2 shim driving runc 1.1.5) with
# criu-like as its CRIU: a private containerd (its own root, state, sockets
# and namespace under a temporary directory) started with a directory holding
# a `criu` link to criu-like first in PATH (the shim runs runc, runc runs
# `criu swrk`). An image built here from busybox-static (a docker archive, no
# registry), a container counting into a bind-mounted directory (holding its
# count while /data/hold exists) with a long `sleep` beside it. Checked:
#   - `ctr task checkpoint --image-path DIR --work-path W`: runc ran `criu swrk`
#     (criu-like), its images and log are there, containerd had paused the
#     task (criu-like found the freezer cgroup frozen and froze it again at
#     release), the task goes on counting;
#   - `ctr container checkpoint --task --image` of the container holding its
#     count: the task goes on; it is killed, the task and the container
#     removed;
#   - `ctr container restore --live`: the task runs, the first value it writes
#     is the checkpointed one + 1 (not 1), its init is pid 1 and the sleep has
#     its pid again in the container's pid namespace, criu-like restored it;
#   - `ctr task checkpoint --exit --image-path DIR`: the task is gone.
# Documentation/runtimes.md ("containerd") has the recipe.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ctr: needs root"; exit 77; }
for p in ctr containerd containerd-shim-runc-v2; do
	command -v $p >/dev/null ||
		{ echo "ctr: $p is not installed (containerd: scripts/install-deps.sh)"; exit 77; }
done
command -v runc >/dev/null || { echo "ctr: runc is not installed"; exit 77; }
BB=$(command -v busybox) && "$BB" --list >/dev/null 2>&1 ||
	{ echo "ctr: busybox (busybox-static) is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "ctr: python3 is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ctr: build first ($CRIU_LIKE)"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d /tmp/criu-like-ctr.XXXXXX)
ns=criu-like-ctr-$$
img=localhost/criu-like-ctr:1
daemon=
C() { ctr -a "$tmp/containerd.sock" -n "$ns" "$@"; }
cleanup() {
	if [ -n "$daemon" ]; then
		for c in $(C task ls -q 2>/dev/null); do C task kill -s KILL "$c" >/dev/null 2>&1; done
		sleep 0.2
		for c in $(C task ls -q 2>/dev/null); do C task rm -f "$c" >/dev/null 2>&1; done
		for c in $(C c ls -q 2>/dev/null); do C c rm "$c" >/dev/null 2>&1; done
		for i in $(C image ls -q 2>/dev/null); do C image rm "$i" >/dev/null 2>&1; done
		kill "$daemon" 2>/dev/null
		i=0
		while kill -0 "$daemon" 2>/dev/null && [ $i -lt 100 ]; do
			i=$((i + 1)); sleep 0.05
		done
	fi
	# snapshots and the shims' rootfs mounts, deepest first
	awk -v t="$tmp/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m"; done
	# the cgroups runc made: /NS/ID in every hierarchy
	for d in /sys/fs/cgroup/$ns /sys/fs/cgroup/*/$ns; do
		[ -d "$d" ] || continue
		for s in "$d"/*/; do [ -d "$s" ] && rmdir "$s" 2>/dev/null; done
		rmdir "$d" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.out "$tmp"/state/io.containerd.runtime.v2.task/"$ns"/*/*.log \
		"$tmp"/state/io.containerd.runtime.v2.task/"$ns"/*/work/*.log "$tmp"/ck/*.log; do
		[ -s "$f" ] && { echo "---- $f"; grep -a -m5 Error "$f"; tail -5 "$f"; }
	done
	echo "---- containerd"; tail -5 "$tmp/containerd.log"
	exit 1
}

# criu-like as `criu` first in the daemon's PATH: its shims and runc inherit it
mkdir -p "$tmp/bin" "$tmp/rootfs/bin" "$tmp/data"
# `criu` notes each call (what runc runs) and is criu-like
printf '#!/bin/sh\necho "$*" >>%s/criu-calls\nexec %s "$@"\n' "$tmp" "$CRIU_LIKE" >"$tmp/bin/criu"
chmod +x "$tmp/bin/criu"
cat >"$tmp/config.toml" <<EOF
version = 2
root = "$tmp/root"
state = "$tmp/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$tmp/containerd.sock"
[ttrpc]
  address = "$tmp/containerd.sock.ttrpc"
EOF
PATH=$tmp/bin:$PATH containerd --config "$tmp/config.toml" >"$tmp/containerd.log" 2>&1 &
daemon=$!
i=0
until C version >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 300 ] && fail "containerd does not answer on $tmp/containerd.sock"
	kill -0 "$daemon" 2>/dev/null || fail "containerd exited"
	sleep 0.05
done

# the image: a docker archive of a busybox-static rootfs, imported
cp "$BB" "$tmp/rootfs/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$tmp/rootfs/bin/$a"
done
python3 - "$tmp" "$img" <<'EOF' || fail "cannot build the image archive"
import hashlib, json, os, subprocess, sys
t, name = sys.argv[1], sys.argv[2]
a = t + '/archive'
os.makedirs(a)
subprocess.check_call(['tar', '-C', t + '/rootfs', '-cf', a + '/layer.tar', '.'])
with open(a + '/layer.tar', 'rb') as f:
    diff = 'sha256:' + hashlib.sha256(f.read()).hexdigest()
json.dump({'architecture': 'amd64', 'os': 'linux',
           'config': {'Cmd': ['/bin/sh'], 'Env': ['PATH=/bin']},
           'rootfs': {'type': 'layers', 'diff_ids': [diff]}}, open(a + '/config.json', 'w'))
json.dump([{'Config': 'config.json', 'RepoTags': [name], 'Layers': ['layer.tar']}],
          open(a + '/manifest.json', 'w'))
subprocess.check_call(['tar', '-C', a, '-cf', t + '/image.tar',
                       'manifest.json', 'config.json', 'layer.tar'])
EOF
C image import "$tmp/image.tar" >"$tmp/import.out" 2>&1 || fail "ctr image import"

log=$tmp/data/log
lines() { { wc -l <"$log"; } 2>/dev/null || echo 0; }
last() { { tail -n1 "$log"; } 2>/dev/null || echo 0; }
wait_lines() { # wait_lines N WHAT: until the log has more than N lines
	i=0
	while [ "$(lines)" -le "$1" ]; do
		i=$((i + 1)); [ $i -gt 300 ] && fail "$2: the loop does not count"; sleep 0.02
	done
}
status() { C task ls 2>/dev/null | awk -v c="$1" '$1 == c { print $3 }'; }
hostpid() { C task ls 2>/dev/null | awk -v c="$1" '$1 == c { print $2 }'; }
# the container's lasting processes as its pid namespace sees them: init, the sleep
nspids() {
	for p in $(C task ps "$1" 2>/dev/null | awk 'NR > 1 { print $1 }'); do
		case "$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)" in
		"sleep 100000 "|"sh -c "*) awk '/^NSpid:/ { print $NF }' "/proc/$p/status" ;;
		esac
	done | sort -n | tr '\n' ' ' | sed 's/ $//'
}

C run -d --mount "type=bind,src=$tmp/data,dst=/data,options=rbind:rw" "$img" c1 \
	sh -c 'sleep 100000 & n=0; while :; do [ -e /data/hold ] && { sleep 0.01; continue; }
	n=$((n + 1)); echo $n >>/data/log; sleep 0.02; done' \
	>"$tmp/run.out" 2>&1 || fail "ctr run -d"
wait_lines 5 "start"
before=$(nspids c1)

# (1) ctr task checkpoint --image-path: runc's images in a directory, the task goes on
C task checkpoint --image-path "$tmp/ck" --work-path "$tmp/ckw" c1 >"$tmp/ck1.out" 2>&1 ||
	fail "ctr task checkpoint --image-path"
grep -q '^swrk ' "$tmp/criu-calls" 2>/dev/null || fail "runc did not run criu-like"
[ -s "$tmp/ck/inventory.img" ] || fail "no images in $tmp/ck: $(ls "$tmp/ck" | head -5)"
grep -aq 'rpc: DUMP requested' "$tmp/ckw/dump.log" || fail "no dump.log of criu-like in $tmp/ckw"
grep -aq 'is already frozen: frozen again' "$tmp/ckw/dump.log" ||
	fail "criu-like was not given the freezer cgroup containerd paused"
[ "$(status c1)" = RUNNING ] || fail "after task checkpoint c1 is '$(status c1)'"
wait_lines "$(lines)" "after task checkpoint"

# (2) ctr container checkpoint --task --image of the container holding its count
# (it counts on as long as /data/hold does not exist): the task goes on
touch "$tmp/data/hold"
sleep 0.2
old=$(last)
n=$(lines)
C c checkpoint --task --image c1 localhost/ck:1 >"$tmp/ck2.out" 2>&1 ||
	fail "ctr container checkpoint --task"
[ "$(status c1)" = RUNNING ] || fail "after container checkpoint c1 is '$(status c1)'"
[ "$(lines)" = "$n" ] || fail "c1 counted while holding"
rm "$tmp/data/hold"
wait_lines "$n" "after container checkpoint"
C task kill -s KILL c1 || fail "ctr task kill"
i=0
until [ "$(status c1)" = STOPPED ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "c1 does not stop: '$(status c1)'"; sleep 0.02
done
C task rm c1 >/dev/null || fail "ctr task rm"
C c rm c1 || fail "ctr container rm"
n=$(lines)
sleep 0.1
[ "$(lines)" = "$n" ] || fail "the log still grows with c1 removed"

# (3) ctr container restore --live: the count goes on from the checkpoint
C c restore --live c1 localhost/ck:1 >"$tmp/restore.out" 2>&1 ||
	fail "ctr container restore --live"
[ "$(status c1)" = RUNNING ] || fail "after the restore c1 is '$(status c1)'"
wait_lines "$n" "after the restore"
first=$(sed -n "$((n + 1))p" "$log")
[ "$first" = $((old + 1)) ] || fail "the count started again: $old at the checkpoint, then $first"
hp=$(hostpid c1)
nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$hp/status")
[ "$nspid" = 1 ] || fail "the restored init (host pid $hp) is pid '$nspid' in its namespace"
after=$(nspids c1)
[ "$after" = "$before" ] || fail "its processes were '$before' in the container, now '$after'"
grep -aq 'rpc: RESTORE requested' \
	"$tmp/state/io.containerd.runtime.v2.task/$ns/c1/work/restore.log" ||
	fail "runc did not restore with criu-like"

# (4) ctr task checkpoint --exit (to a directory: ctr 1.6 fails writing to its
# content store an image after `ctr container checkpoint --image`, "already
# exists"; the dump is done): the task is gone
C task checkpoint --exit --image-path "$tmp/ck3" c1 >"$tmp/ck4.out" 2>&1 ||
	fail "ctr task checkpoint --exit"
[ -s "$tmp/ck3/inventory.img" ] || fail "no images in $tmp/ck3: $(ls "$tmp/ck3" | head -5)"
i=0
until [ "$(status c1)" = STOPPED ] || [ -z "$(status c1)" ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "after --exit c1 is '$(status c1)'"; sleep 0.02
done
n=$(lines)
sleep 0.1
[ "$(lines)" = "$n" ] || fail "the count goes on after ctr task checkpoint --exit"

echo "ctr: task checkpoint --image-path, container checkpoint --task, restore --live:" \
	"$old at the checkpoint, $first after, pids '$after' kept; task checkpoint --exit"
