#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A busybox container with a mount namespace and a UTS namespace of its own
# (unshare --mount --uts, pivot_root into a rootfs of busybox-static): its
# root a bind mount of the rootfs, proc, sysfs read-only, devtmpfs, a tmpfs
# holding a file, a hard link, a symlink and a FIFO, a read-only bind of its own /etc, and /data bound in from the host,
# named at dump with --external mnt[/data]:data. Its hostname is set inside
# and a loop counts in /data/count. Checked:
#   - without --external the dump is refused naming /data, the tree runs on;
#   - a restore without --external mnt[data]:PATH fails naming it, leaves
#     nothing running and the images untouched;
#   - restored with --root and --external, the loop goes on from where it
#     was, in a new mount namespace with the same mounts (mount points,
#     types, per-mount options), its hostname, the host's untouched.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-mnt: needs root"; exit 77; }
command -v unshare >/dev/null || { echo "ns-mnt: unshare (util-linux) is not installed"; exit 77; }
BB=$(command -v busybox) && "$BB" --list >/dev/null 2>&1 ||
	{ echo "ns-mnt: busybox (busybox-static) is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-mnt: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; rm -rf "$tmp"' EXIT
host=$(hostname)

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.err; do
		[ -s "$f" ] && { echo "---- $f"; tail -8 "$f"; }
	done
	exit 1
}

# the rootfs: busybox and its applets, the mount points
R=$tmp/root
mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/dev" "$R/tmp" "$R/etc" "$R/ro-etc" "$R/data" "$R/old" \
	"$tmp/data"
cp "$BB" "$R/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$R/bin/$a"
done
echo inside >"$R/etc/name"

cat >"$tmp/enter.sh" <<'EOF2'
set -e
R=$1
mount --bind "$R" "$R"
cd "$R"
mount -t proc proc proc
mount -t sysfs sys sys
mount -o remount,bind,ro sys
mount -t devtmpfs dev dev
mount -t tmpfs -o size=1m,mode=1777 tmp tmp
mkdir tmp/dir
echo "tmpfs file" >tmp/dir/file
ln tmp/dir/file tmp/hardlink
ln -s dir/file tmp/symlink
mkfifo tmp/fifo
chmod 0640 tmp/dir/file
mount --bind etc ro-etc
mount -o remount,bind,ro ro-etc
mount --bind "$2" data
pivot_root . old
umount -l /old
hostname "$(cat /etc/name)"
exec /bin/setsid /bin/sh -c 'n=0; while :; do n=$((n + 1)); echo "$n $(hostname)" >/data/count.new; mv /data/count.new /data/count; sleep 0.02; done' </dev/null >/dev/null 2>&1
EOF2

setsid unshare --mount --uts --fork sh "$tmp/enter.sh" "$R" "$tmp/data" </dev/null \
	>"$tmp/enter.err" 2>&1 &
count() { cut -d' ' -f1 "$tmp/data/count" 2>/dev/null || echo 0; }
wait_more() { # wait_more N WHAT: until the count passes N
	i=0
	while [ "$(count)" -le "$1" ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$2: the loop does not count"; sleep 0.02
	done
}
wait_more 0 "start"
pid=$(pgrep -f "^/bin/sh -c n=0; while" | head -n 1)
[ -n "$pid" ] || fail "no container loop"
[ "$(cut -d' ' -f2 "$tmp/data/count")" = inside ] || fail "the container's hostname is not set"
mounts() { awk '{ o = $6; for (i = 7; $i != "-"; i++) ; print $5, $(i + 1), o }' "/proc/$1/mountinfo"; }
mounts $pid >"$tmp/mounts.before"

# /data comes from the host: refused without --external
"$CRIU_LIKE" dump -t $pid -D "$tmp/img" -R >"$tmp/refused.out" 2>"$tmp/refused.err" &&
	fail "a dump without --external mnt[/data] succeeded"
grep -q "mount /data: a bind mount of .* --external mnt\[/data\]:NAME" "$tmp/refused.err" ||
	fail "the refusal does not name /data and --external"
before=$(count)
wait_more $((before + 2)) "after the refusal"
echo "ok: refused without --external: $(grep -o 'mount /data: [^(]*' "$tmp/refused.err" | head -n 1)"

rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t $pid -D "$tmp/img" --external "mnt[/data]:data" -v4 -o dump.log \
	2>"$tmp/dump.err" || { cp "$tmp/img/dump.log" "$tmp/dump.log"; fail "dump"; }
i=0 # killed by the dump; its parent, unshare, reaps it
while kill -0 $pid 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "$pid still runs after the dump"; sleep 0.02
done
[ -s "$tmp/img/mntns-1.img" ] || [ -s "$tmp/img/mntns-2.img" ] || fail "no mntns image"
before=$(count)

# no --external mnt[data] at restore: fails naming it, nothing left behind
sum=$(cat "$tmp"/img/*.img | cksum)
"$CRIU_LIKE" restore -D "$tmp/img" -d --root "$R" >"$tmp/noext.out" 2>"$tmp/noext.err" &&
	fail "a restore without --external mnt[data] succeeded"
grep -q "external mount data not given" "$tmp/noext.err" || fail "the failure does not name data"
kill -0 $pid 2>/dev/null && fail "$pid runs after the failed restore"
[ "$(cat "$tmp"/img/*.img | cksum)" = "$sum" ] || fail "the failed restore changed the images"
echo "ok: a restore without --external mnt[data]:PATH fails naming it"

"$CRIU_LIKE" restore -D "$tmp/img" -d --root "$R" --external "mnt[data]:$tmp/data" -v4 \
	-o restore.log 2>"$tmp/restore.err" || { cp "$tmp/img/restore.log" "$tmp/restore.log"; fail "restore"; }
kill -0 $pid || fail "$pid is not running after the restore"
wait_more $((before + 2)) "after the restore"
[ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] ||
	fail "$pid was restored into the host's mount namespace"
mounts $pid >"$tmp/mounts.after"
diff "$tmp/mounts.before" "$tmp/mounts.after" >"$tmp/mounts.err" || fail "the mounts differ"
[ "$(cut -d' ' -f2 "$tmp/data/count")" = inside ] || fail "the hostname inside changed"
[ "$(hostname)" = "$host" ] || fail "the host's hostname changed"
[ "$(cat /proc/$pid/root/ro-etc/name)" = inside ] || fail "/ro-etc does not show /etc"
t=/proc/$pid/root/tmp
[ "$(cat $t/dir/file)" = "tmpfs file" ] && [ "$(stat -c %a $t/dir/file)" = 640 ] &&
	[ "$(stat -c %i $t/dir/file)" = "$(stat -c %i $t/hardlink)" ] &&
	[ "$(readlink $t/symlink)" = dir/file ] && [ -p $t/fifo ] ||
	fail "the container's tmpfs /tmp lost its files, link, symlink or fifo"
echo "ok: restored in $(readlink /proc/$pid/ns/mnt): $(wc -l <"$tmp/mounts.after") mounts as before, count $before -> $(count)"
kill -KILL $pid
echo "ns-mnt: a busybox container with its mounts, an external one, its hostname, dumped and restored"
