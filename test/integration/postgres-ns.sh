#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PostgreSQL 15 (Debian's package) in pid, IPC and mount namespaces of its
# own (`unshare --fork --pid --ipc --mount`), the host's network namespace:
# the postmaster is the container's init (pid 1), in a root made on purpose:
# a bind mount of an empty directory (--root at restore) holding bind mounts
# of the host's /usr and /etc and of a temporary directory (/pg: the data
# directory, the unix socket, the log), each named with --external at dump
# and bound again at restore, a tmpfs /dev with its device nodes and /dev/shm
# (dynamic_shared_memory_type=posix), a tmpfs /tmp and its own /proc. A psql
# session outside, over TCP to 127.0.0.1, holds a TEMPORARY table. Dumped
# with --tcp-established and restored, twice: the same session (same
# backend) sees its table and writes to it, a new client connects, the
# postmaster is pid 1 of a pid namespace that is not the host's, its IPC
# and mount namespaces are not the host's either, its SysV segment is in its
# own IPC namespace (none in the host's).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "postgres-ns: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "postgres-ns: build first ($CRIU_LIKE)"; exit 1; }
PG=/usr/lib/postgresql/15/bin
[ -x $PG/postgres ] && command -v psql >/dev/null || sh scripts/install-deps.sh >/dev/null 2>&1
[ -x $PG/postgres ] && command -v psql >/dev/null ||
	{ echo "postgres-ns: PostgreSQL 15 (package postgresql) cannot be installed"; exit 77; }
id postgres >/dev/null 2>&1 || { echo "postgres-ns: no user postgres (package postgresql)"; exit 77; }
for c in unshare setpriv nsenter python3; do
	command -v $c >/dev/null || { echo "postgres-ns: $c is not installed"; exit 77; }
done

tmp=$(mktemp -d)
chmod 755 "$tmp"
pm=
psql_pid=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -n "$psql_pid" ] && kill -KILL "$psql_pid" 2>/dev/null
	[ -n "$pm" ] && kill -KILL "$pm" 2>/dev/null # the init: its namespace goes with it
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/enter.err" "$tmp/dump.out" "$tmp/restore.out" "$tmp/pg/pg.log" "$tmp/psql.out"; do
		[ -s "$f" ] && { echo "---- $f"; tail -15 "$f"; }
	done
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn' "$f" | tail -10; }
	done
	exit 1
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
P=$tmp/pg
mkdir -p "$P/data" "$P/sock"
touch "$P/pg.log"
chown -R postgres: "$P"
runuser -u postgres -- $PG/initdb -D "$P/data" -A trust -U postgres --no-sync >"$tmp/initdb.out" 2>&1 ||
	{ cat "$tmp/initdb.out"; fail "initdb"; }

# The root: mount points, and the merged-/usr symlinks of the host
R=$tmp/root
mkdir -p "$R/usr" "$R/etc" "$R/pg" "$R/dev" "$R/tmp" "$R/proc" "$R/old"
for l in bin lib lib64 sbin; do
	[ -L /$l ] && ln -s "$(readlink /$l)" "$R/$l"
done
[ -L "$R/bin" ] && [ -L "$R/lib" ] || fail "the host's /bin or /lib is not a symlink into /usr"

cat >"$tmp/enter.sh" <<EOF2
set -e
mount --make-rprivate /
mount --bind "$R" "$R"
cd "$R"
mount --bind /usr usr
mount --bind /etc etc
mount --bind "$P" pg
mount -t tmpfs -o mode=755,size=64m dev dev
mknod -m 666 dev/null c 1 3
mknod -m 666 dev/zero c 1 5
mknod -m 666 dev/random c 1 8
mknod -m 666 dev/urandom c 1 9
mkdir -m 1777 dev/shm
mount -t tmpfs -o mode=1777,size=4m tmp tmp
pivot_root . old
mount -t proc proc /proc
umount -l /old
exec setsid setpriv --reuid=postgres --regid=postgres --init-groups $PG/postgres -D /pg/data \
	-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=/pg/sock \
	-c dynamic_shared_memory_type=posix -c shared_buffers=16MB -c fsync=off \
	</dev/null >>/pg/pg.log 2>&1
EOF2
unshare --fork --pid --ipc --mount sh "$tmp/enter.sh" </dev/null >"$tmp/enter.err" 2>&1 &
ush=$!

q() { psql -X -A -t -q -h 127.0.0.1 -p "$port" -U postgres -c "$1" postgres 2>/dev/null; }
i=0
until [ "$(q 'SELECT 1')" = 1 ]; do
	i=$((i + 1)); [ $i -le 300 ] || fail "the postmaster does not answer on 127.0.0.1:$port"
	kill -0 $ush 2>/dev/null || fail "the container stopped"
	sleep 0.1
done
pm=$(pgrep -P $ush)
[ -n "$pm" ] || fail "no postmaster under unshare ($ush)"
[ "$(awk '/^NSpid/ { print $NF }' /proc/$pm/status)" = 1 ] || fail "the postmaster is not pid 1 inside"
tr '\0' ' ' <"/proc/$pm/root/proc/1/cmdline" | grep -q "postgres -D /pg/data" ||
	fail "the container's /proc is not its own"
[ "$(head -1 "$P/data/postmaster.pid")" = 1 ] || fail "postmaster.pid does not say 1"

# The session: psql reading a fifo held open on fd 3; \echo marks each answer.
mkfifo "$tmp/in"
psql -X -A -t -q -h 127.0.0.1 -p "$port" -U postgres postgres <"$tmp/in" >"$tmp/psql.out" 2>&1 &
psql_pid=$!
exec 3>"$tmp/in"
ask() {
	printf '%s\n\\echo %s\n' "$1" "$2" >&3
	n=0
	until grep -q "^$2\$" "$tmp/psql.out"; do
		n=$((n + 1))
		[ $n -le 1000 ] || return 1
		kill -0 "$psql_pid" 2>/dev/null || return 1
		sleep 0.01
	done
}
ask "CREATE TEMPORARY TABLE kept (x int); INSERT INTO kept VALUES (42); SELECT 'backend ' || pg_backend_pid();" m1 ||
	fail "the psql session did not answer"
backend=$(sed -n 's/^backend //p' "$tmp/psql.out")
[ -n "$backend" ] || fail "no backend pid"
segs() { nsenter -t "$pm" -i sh -c 'cat /proc/sysvipc/shm' | awk 'NR > 1 { print $1, $2, $4 }'; }
seg_before=$(segs)
[ -n "$seg_before" ] || fail "no SysV segment in the container's IPC namespace"

ext_dump="--external mnt[/usr]:usr --external mnt[/etc]:etc --external mnt[/pg]:pg"
ext_rst="--external mnt[usr]:/usr --external mnt[etc]:/etc --external mnt[pg]:$P"
sum=42
for cycle in 1 2; do
	rm -rf "$tmp/img"
	# shellcheck disable=SC2086
	"$CRIU_LIKE" dump -t "$pm" -D "$tmp/img" --tcp-established $ext_dump -v4 -o dump.log \
		>"$tmp/dump.out" 2>&1 || fail "dump $cycle of the postmaster (pid $pm)"
	i=0
	while kill -0 "$pm" 2>/dev/null; do
		i=$((i + 1)); [ $i -le 250 ] || fail "the postmaster runs on after the dump"; sleep 0.02
	done
	# shellcheck disable=SC2086
	"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established --root "$R" $ext_rst -v4 \
		-o restore.log --pidfile "$tmp/rpid" >"$tmp/restore.out" 2>&1 ||
		fail "restore $cycle of the postmaster"
	pm=$(cat "$tmp/rpid")
	kill -0 "$pm" || fail "the restored postmaster $pm is not running"
	[ "$(awk '/^NSpid/ { print $NF }' /proc/$pm/status)" = 1 ] ||
		fail "restore $cycle: the postmaster is not pid 1 inside"
	for k in pid ipc mnt; do
		[ "$(readlink /proc/$pm/ns/$k)" != "$(readlink /proc/self/ns/$k)" ] ||
			fail "restore $cycle: the postmaster is in the host's $k namespace"
	done
	# its /proc is the container's: pid 1 there is the postmaster
	tr '\0' ' ' <"/proc/$pm/root/proc/1/cmdline" | grep -q "postgres -D /pg/data" ||
		fail "restore $cycle: the container's /proc is not its own: pid 1 there is $(tr '\0' ' ' <"/proc/$pm/root/proc/1/cmdline")"
	[ "$(readlink /proc/$pm/ns/net)" = "$(readlink /proc/self/ns/net)" ] ||
		fail "restore $cycle: the postmaster is not in the host's network namespace"
	ask "SELECT 'sum ' || sum(x) || ' ' || pg_backend_pid() FROM kept; INSERT INTO kept VALUES (1);" \
		"r$cycle" || fail "the psql session does not answer after restore $cycle"
	grep -q "^sum $sum $backend\$" "$tmp/psql.out" ||
		fail "restore $cycle: the session lost its temporary table or its backend: $(grep '^sum' "$tmp/psql.out")"
	sum=$((sum + 1))
	grep -qiE 'server closed|terminat|error' "$tmp/psql.out" && fail "psql saw an error"
	[ "$(q "SELECT $cycle")" = "$cycle" ] || fail "a new client cannot connect after restore $cycle"
	[ "$(segs)" = "$seg_before" ] ||
		fail "restore $cycle: SysV segments inside: '$(segs)', before: '$seg_before'"
	grep -q "SYSV" "/proc/$pm/maps" || fail "restore $cycle: the postmaster has no SysV attach"
	echo "ok: cycle $cycle: postmaster host pid $pm (pid 1 inside), backend $backend, segment $seg_before"
done
ask "SELECT 'sum ' || sum(x) || ' end' FROM kept;" m9 || fail "the session stopped"
grep -q "^sum $sum end\$" "$tmp/psql.out" || fail "the inserts after the restores are not there"
exec 3>&-
wait "$psql_pid"
psql_pid=
echo "PASS (port $port, backend $backend)"
