#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Soak: N dump-and-restore cycles (default 1000) of redis-server under load
# from 10 keep-alive clients (test/integration/redis-clients.py), each cycle
# a kill-mode dump with --tcp-established and a restore -d of the same pid.
# The clients never reconnect and check every answer: an INCR that is not
# their own round count is a lost or doubled write, any other failure an
# error. The server's database 0 (100,000 keys) must keep its digest. Not in
# `make test` (minutes); prints one line per 50 cycles and ends with
#   soak-redis: C cycles, L lost or doubled writes, E client errors, F failed cycles
# and exits 0 only when all three counts are 0.
#
#   B=build sh scripts/soak-redis.sh [CYCLES]      as root, from the repository root
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
CYCLES=${1:-1000}
[ "$(id -u)" = 0 ] || { echo "soak-redis: needs root"; exit 1; }
[ -x "$CRIU_LIKE" ] || { echo "soak-redis: build first ($CRIU_LIKE)"; exit 1; }
command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
	{ echo "soak-redis: redis-server and redis-cli are not installed (scripts/install-deps.sh)"; exit 1; }
PY=$(command -v python3)
CLIENTS=$(realpath test/integration/redis-clients.py)
NCLIENTS=10
KEYS=100000

tmp=$(mktemp -d)
pid=
cpid=
trap '[ -n "$cpid" ] && kill -KILL $cpid 2>/dev/null; [ -n "$pid" ] && kill -KILL $pid 2>/dev/null
	rm -rf "$tmp"' EXIT

. test/integration/redis.inc
redis_start || { echo "soak-redis: redis-server did not start"; exit 1; }
cli DEBUG POPULATE $KEYS key 64 >/dev/null
digest=$(cli DEBUG DIGEST)
mkdir "$tmp/cl"
"$PY" "$CLIENTS" "$port" $NCLIENTS "$tmp/cl" >"$tmp/clients.out" 2>&1 &
cpid=$!
progress_past 50 || { echo "soak-redis: the clients get no answers"; exit 1; }

failed=0
c=0
start=$(date +%s)
while [ $c -lt "$CYCLES" ]; do
	c=$((c + 1))
	rm -rf "$tmp/img"
	before=$(cat "$tmp/cl/progress")
	if ! "$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" --tcp-established >"$tmp/dump.out" 2>&1; then
		failed=$((failed + 1))
		echo "cycle $c: dump failed:"
		sed 's/^/    /' "$tmp/dump.out"
		kill -0 "$pid" 2>/dev/null || break
		continue
	fi
	if ! "$CRIU_LIKE" restore -D "$tmp/img" -d --tcp-established >"$tmp/restore.out" 2>&1; then
		failed=$((failed + 1))
		echo "cycle $c: restore failed:"
		sed 's/^/    /' "$tmp/restore.out"
		break # the server is gone: nothing left to soak
	fi
	if ! progress_past $((before + 5)); then
		echo "cycle $c: the clients stopped after the restore (at $before rounds)"
		failed=$((failed + 1))
		break
	fi
	[ $((c % 50)) = 0 ] &&
		echo "cycle $c: $(cat "$tmp/cl/progress") rounds per client, $(($(date +%s) - start)) s"
done

if kill -0 "$pid" 2>/dev/null; then
	touch "$tmp/cl/stop"
	wait $cpid
else
	# the server is gone (a failed restore): its clients would wait on their
	# connections, which the kept network lock holds silent
	kill -KILL $cpid 2>/dev/null
	wait $cpid 2>/dev/null
	# the lock the killed dump kept for the restore that failed
	name=$("$CRIU_LIKE" decode "$tmp/img/inventory.img" 2>/dev/null |
		sed -n 's/.*"network_lock": "\([^"]*\)".*/\1/p')
	[ -n "$name" ] && "$CRIU_LIKE" net-lock unlock "$name" >/dev/null 2>&1
fi
cpid=
lost=$(grep -c 'INCR gave' "$tmp/cl/result" "$tmp/clients.out" 2>/dev/null | awk -F: '{ s += $NF } END { print s + 0 }')
errors=$(awk '/^client / { e += $6 } END { print e + 0 }' "$tmp/cl/result" 2>/dev/null)
grep -q "^connections $NCLIENTS\$" "$tmp/cl/result" ||
	{ echo "the clients did not keep their $NCLIENTS connections"; errors=$((errors + 1)); }
if [ "$(cli DBSIZE 2>/dev/null)" != $KEYS ] || ! cli -n 1 FLUSHDB >/dev/null ||
	[ "$(cli DEBUG DIGEST)" != "$digest" ]; then
	echo "database 0 changed (DBSIZE $(cli DBSIZE 2>/dev/null))"
	failed=$((failed + 1))
fi
sed 's/^/  /' "$tmp/cl/result"
echo "soak-redis: $c cycles, $lost lost or doubled writes, $errors client errors, $failed failed cycles"
[ "$lost" = 0 ] && [ "$errors" = 0 ] && [ "$failed" = 0 ]
