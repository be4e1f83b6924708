#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# redis-server, a program nobody here wrote, dumped and restored with
# --tcp-established while 10 clients stay connected to it. It holds 100,000
# keys (DEBUG POPULATE) in database 0; the clients (redis-clients.py) work on
# their own keys in database 1 over one connection each, checking every
# answer against what they wrote before. After the restore, from the same
# pid: the same 10 connections go on (no error, no reconnect, same local
# ports, seen by the server in CLIENT LIST), every client's earlier writes
# are there (its INCR counter goes on from its own count), and database 0 is
# intact: DBSIZE 100000 and the same DEBUG DIGEST once database 1 is emptied.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "redis: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "redis: build first ($CRIU_LIKE)"; exit 1; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
	sh scripts/install-deps.sh >/dev/null 2>&1
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
	{ echo "redis: redis-server and redis-cli cannot be installed"; exit 77; }
PY=$(command -v python3 2>/dev/null) && "$PY" -c 'pass' 2>/dev/null ||
	{ echo "redis: python3 is not installed"; exit 77; }
CLIENTS=$(realpath test/integration/redis-clients.py)
NCLIENTS=10
KEYS=100000

tmp=$(mktemp -d)
pid=
cpid=
trap '[ -n "$cpid" ] && kill -KILL $cpid 2>/dev/null; [ -n "$pid" ] && kill -KILL $pid 2>/dev/null
	rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/dump.out" "$tmp/restore.out" "$tmp/cl/result" "$tmp/clients.out" \
		"$tmp/redis.log"; do
		[ -s "$f" ] && { echo "---- $f"; tail -12 "$f"; }
	done
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn' "$f" | tail -10; }
	done
	exit 1
}

. test/integration/redis.inc
redis_start || fail "redis-server did not start"
[ "$(cat "$tmp/redis.pid")" = "$pid" ] || fail "redis-server is not pid $pid"
cli DEBUG POPULATE $KEYS key 64 >/dev/null
[ "$(cli DBSIZE)" = $KEYS ] || fail "DEBUG POPULATE: DBSIZE $(cli DBSIZE)"
digest=$(cli DEBUG DIGEST)

mkdir "$tmp/cl"
"$PY" "$CLIENTS" "$port" $NCLIENTS "$tmp/cl" >"$tmp/clients.out" 2>&1 &
cpid=$!
progress_past 100 || fail "the clients do not get answers"

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" --tcp-established -v4 -o dump.log \
	>"$tmp/dump.out" 2>&1 || fail "dump of redis-server (pid $pid)"
wait "$pid" 2>/dev/null
before=$(cat "$tmp/cl/progress")
"$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established -v4 -o restore.log \
	--pidfile "$tmp/rpid" >"$tmp/restore.out" 2>&1 || fail "restore of redis-server"
[ "$(cat "$tmp/rpid")" = "$pid" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pid"
progress_past $((before + 100)) || fail "the clients stopped after the restore (at $before rounds)"

# The server side: the same 10 connections (and this redis-cli).
clients_verdict 127.0.0.1

[ "$(cli DBSIZE)" = $KEYS ] || fail "DBSIZE $(cli DBSIZE) after the restore, expected $KEYS"
cli -n 1 FLUSHDB >/dev/null
after=$(cli DEBUG DIGEST)
[ "$after" = "$digest" ] || fail "database 0 changed: digest $after, was $digest"
echo "rounds per client: at least $before before the dump, $(cat "$tmp/cl/progress") at the end"
sed 's/^/  /' "$tmp/cl/result"
echo "PASS"
