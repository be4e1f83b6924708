#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PostgreSQL 15 (Debian's package) in the host's namespaces, dumped and
# restored with --tcp-established while a psql session is connected over TCP
# and holds a TEMPORARY table. PostgreSQL always keeps a small SysV shm
# segment attached (56 bytes on 15: its "is the data directory in use"
# interlock), plus MAP_SHARED|MAP_ANONYMOUS main memory, POSIX shm in
# /dev/shm (dynamic_shared_memory_type=posix), a unix socket, latches over a
# self-pipe and epoll. After the restore: the same psql session (same
# backend pid) still sees its temporary table and its row, writes to it
# again, and a new client connects; the SysV segment is the same id, key and
# size, attached by the postmaster and its children again.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "postgres: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "postgres: build first ($CRIU_LIKE)"; exit 1; }
PG=/usr/lib/postgresql/15/bin
[ -x $PG/pg_ctl ] && command -v psql >/dev/null || sh scripts/install-deps.sh >/dev/null 2>&1
[ -x $PG/pg_ctl ] && command -v psql >/dev/null ||
	{ echo "postgres: PostgreSQL 15 (package postgresql) cannot be installed"; exit 77; }
id postgres >/dev/null 2>&1 || { echo "postgres: no user postgres (package postgresql)"; exit 77; }
PY=$(command -v python3 2>/dev/null) ||
	{ echo "postgres: python3 is not installed"; exit 77; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
mkdir "$tmp/data" && chown postgres: "$tmp/data"
pm=
psql_pid=
shmid=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -n "$psql_pid" ] && kill -KILL "$psql_pid" 2>/dev/null
	if [ -n "$pm" ]; then
		pkill -KILL -s "$(ps -o sid= -p "$pm" | tr -d ' ')" 2>/dev/null
		kill -KILL "$pm" 2>/dev/null
	fi
	[ -n "$shmid" ] && ipcrm -m "$shmid" 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/dump.out" "$tmp/restore.out" "$tmp/pg.log" "$tmp/psql.out"; do
		[ -s "$f" ] && { echo "---- $f"; tail -15 "$f"; }
	done
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn' "$f" | tail -10; }
	done
	exit 1
}

as_pg() { runuser -u postgres -- "$@"; }

# A free port on 127.0.0.1.
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$tmp/sock"
chown postgres: "$tmp/sock"
as_pg $PG/initdb -D "$tmp/data" -A trust -U postgres --no-sync >"$tmp/initdb.out" 2>&1 ||
	{ cat "$tmp/initdb.out"; fail "initdb"; }
touch "$tmp/pg.log" && chown postgres: "$tmp/pg.log"
as_pg $PG/pg_ctl -D "$tmp/data" -l "$tmp/pg.log" -w -t 30 -o "-p $port -c listen_addresses=127.0.0.1 \
-c unix_socket_directories=$tmp/sock -c dynamic_shared_memory_type=posix -c shared_buffers=16MB \
-c fsync=off" start >"$tmp/pgctl.out" 2>&1 || fail "pg_ctl start"
pm=$(head -1 "$tmp/data/postmaster.pid")
# postmaster.pid line 7: the key and id of the SysV segment.
shmid=$(sed -n 7p "$tmp/data/postmaster.pid" | awk '{ print $2 }')
[ -n "$shmid" ] && grep -q "^ *[0-9]* *$shmid " /proc/sysvipc/shm ||
	fail "no SysV segment in postmaster.pid: $(sed -n 7p "$tmp/data/postmaster.pid")"
seg_before=$(awk -v id="$shmid" '$2 == id { print $1, $2, $4 }' /proc/sysvipc/shm)

q() { psql -X -A -t -q -h 127.0.0.1 -p "$port" -U postgres -c "$1" postgres; }

# The session: psql reading a fifo held open on fd 3; \echo marks each answer.
mkfifo "$tmp/in"
psql -X -A -t -q -h 127.0.0.1 -p "$port" -U postgres postgres <"$tmp/in" >"$tmp/psql.out" 2>&1 &
psql_pid=$!
exec 3>"$tmp/in"
n=0
# ask SQL MARK: send, then wait for MARK in the output (10 s at most)
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
[ "$(q 'SELECT 1')" = 1 ] || fail "a second client cannot connect before the dump"

"$CRIU_LIKE" dump -t "$pm" -D "$tmp/img" --tcp-established -v4 -o dump.log \
	>"$tmp/dump.out" 2>&1 || fail "dump of the postmaster (pid $pm)"
kill -0 "$pm" 2>/dev/null && fail "the postmaster runs on after the dump"
"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established -v4 -o restore.log \
	--pidfile "$tmp/rpid" >"$tmp/restore.out" 2>&1 || fail "restore of the postmaster"
[ "$(cat "$tmp/rpid")" = "$pm" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pm"

ask "SELECT 'sum ' || sum(x) || ' ' || pg_backend_pid() FROM kept; INSERT INTO kept VALUES (1);" m2 ||
	fail "the psql session does not answer after the restore"
grep -q "^sum 42 $backend\$" "$tmp/psql.out" ||
	fail "the session lost its temporary table or its backend: $(grep '^sum' "$tmp/psql.out")"
ask "SELECT 'sum ' || sum(x) FROM kept;" m3 || fail "the session stopped"
grep -q "^sum 43\$" "$tmp/psql.out" || fail "the insert after the restore is not there"
grep -qiE 'server closed|terminat|error' "$tmp/psql.out" && fail "psql saw an error"
[ "$(q 'SELECT 2')" = 2 ] || fail "a new client cannot connect after the restore"
seg_after=$(awk -v id="$shmid" '$2 == id { print $1, $2, $4 }' /proc/sysvipc/shm)
[ "$seg_after" = "$seg_before" ] ||
	fail "SysV segment: '$seg_after' after the restore, '$seg_before' before"
grep -q "SYSV" "/proc/$pm/maps" || fail "the postmaster has no SysV attach after the restore"

# Twice: this time the segment is removed between the dump and the restore
# (as by ipcrm): the restore creates it again under the same id and key.
rm -rf "$tmp/img"
"$CRIU_LIKE" dump -t "$pm" -D "$tmp/img" --tcp-established -v4 -o dump.log \
	>"$tmp/dump.out" 2>&1 || fail "second dump of the postmaster (pid $pm)"
ipcrm -m "$shmid" || fail "ipcrm -m $shmid"
# First another segment takes the id: refused, naming it, nothing left running.
echo "$shmid" >/proc/sys/kernel/shm_next_id
other=$(ipcmk -M 10 | awk '{ print $NF }')
[ "$other" = "$shmid" ] || { ipcrm -m "$other"; fail "ipcmk got id $other, not $shmid"; }
"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established -v4 -o restore.log \
	>"$tmp/restore.out" 2>&1 && fail "restored while another segment holds id $shmid"
ipcrm -m "$other"
grep -q "another segment holds id $shmid" "$tmp/restore.out" ||
	fail "the refusal does not name the segment: $(grep Error "$tmp/restore.out")"
kill -0 "$pm" 2>/dev/null && fail "the refused restore left the postmaster running"
"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established -v4 -o restore.log \
	>"$tmp/restore.out" 2>&1 || fail "second restore of the postmaster"
grep -q "segment $shmid .* created again" "$tmp/img/restore.log" ||
	fail "the removed segment was not created again"
seg_after=$(awk -v id="$shmid" '$2 == id { print $1, $2, $4 }' /proc/sysvipc/shm)
[ "$seg_after" = "$seg_before" ] ||
	fail "SysV segment: '$seg_after' after the second restore, '$seg_before' before"
ask "SELECT 'sum ' || sum(x) || ' again' FROM kept;" m4 || fail "the session stopped (second restore)"
grep -q "^sum 43 again\$" "$tmp/psql.out" || fail "the table changed in the second cycle"

exec 3>&-
wait "$psql_pid"
psql_pid=
[ "$(q 'SELECT 3')" = 3 ] || fail "a new client cannot connect after the second restore"
as_pg $PG/pg_ctl -D "$tmp/data" -m fast -w -t 30 stop >/dev/null 2>&1 || fail "pg_ctl stop"
pm=
grep -q "^ *[0-9]* *$shmid " /proc/sysvipc/shm && fail "the postmaster left its segment behind"
shmid=
echo "PASS (port $port, backend $backend, segment $seg_before)"
