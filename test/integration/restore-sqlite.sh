#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The sqlite3 shell, a program nobody here wrote, with an in-memory database
# fed through a pipe, dumped and restored. The tree is "sh -c 'feeder |
# sqlite3'": the feeder, a shell loop, copies each request file this script
# drops into the pipe. Before the dump sqlite3 creates a table of 10,000 rows;
# after the restore, with the same pids, it must still read the same pipe and
# answer a SELECT over that table, then take an update and answer again: an
# empty database ("no such table") or a lost pipe fails. (A named FIFO held
# open by this script would be simpler; the dump refuses named FIFOs so far.)
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "restore-sqlite: needs root"; exit 77; }
command -v sqlite3 >/dev/null || { echo "restore-sqlite: sqlite3 is not installed"; exit 77; }
command -v setsid >/dev/null || { echo "restore-sqlite: setsid is not installed"; exit 77; }
command -v pgrep >/dev/null || { echo "restore-sqlite: pgrep is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "restore-sqlite: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "-$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log" "$tmp/dump.out" "$tmp/restore.out"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn' "$f" | tail -15; }
	done
	echo "---- sqlite3 output"
	tail -5 "$tmp/out"
	exit 1
}

# wait_line N: until the output has N lines, 10 s at most (the file is made
# by the pipeline's shell, which may not have run yet: no file is 0 lines).
wait_line() {
	n=0
	while [ "$(cat "$tmp/out" 2>/dev/null | wc -l)" -lt "$1" ]; do
		n=$((n + 1))
		[ $n -le 200 ] || return 1
		sleep 0.05
	done
}

# send: drop SQL (stdin) as the next request; the feeder picks it up.
send() {
	cat >"$tmp/req.tmp" && mv "$tmp/req.tmp" "$tmp/req"
}

# The pipeline's shell leads its own session and group (setsid, no fork under sh).
# The feeder claims a request by renaming it first: a dump between its cat
# and its rm must not make the rm, run after the restore, eat the next one.
setsid sh -c 'while :; do
	if mv "$1" "$1.taken" 2>/dev/null; then cat "$1.taken"; rm -f "$1.taken"; fi
	sleep 0.05
done | sqlite3' sh "$tmp/req" </dev/null >"$tmp/out" 2>&1 &
pid=$!
send <<'SQL'
CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 10000)
INSERT INTO t SELECT i, 'row ' || i FROM c;
SELECT 'before', count(*), sum(k), max(v) FROM t;
SQL
wait_line 1 || fail "sqlite3 did not answer"
first=$(sed -n 1p "$tmp/out")
[ "$first" = "before|10000|50005000|row 9999" ] || fail "unexpected answer: $first"
sq=$(pgrep -s "$pid" -x sqlite3)
[ -n "$sq" ] || fail "no sqlite3 in session $pid"

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -v4 -o dump.log >"$tmp/dump.out" 2>&1 ||
	fail "dump of the pipeline (sh $pid, sqlite3 $sq)"
wait "$pid" 2>/dev/null
"$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o restore.log --pidfile "$tmp/rpid" \
	>"$tmp/restore.out" 2>&1 || fail "restore of sqlite3"
[ "$(cat "$tmp/rpid")" = "$pid" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pid"
[ "$(cat /proc/$sq/comm 2>/dev/null)" = sqlite3 ] || fail "sqlite3 is not back as pid $sq"
send <<'SQL'
SELECT 'after', count(*), sum(k), max(v) FROM t;
UPDATE t SET v = 'changed' WHERE k % 2 = 0;
SELECT 'updated', count(*) FROM t WHERE v = 'changed';
SQL
wait_line 3 || fail "sqlite3 did not answer through the pipe after the restore"
after=$(sed -n 2p "$tmp/out")
updated=$(sed -n 3p "$tmp/out")
[ "$after" = "after|10000|50005000|row 9999" ] && [ "$updated" = "updated|5000" ] ||
	fail "after the restore: \"$after\" \"$updated\""
echo "before: $first"
echo "after:  $after, $updated (sqlite3 pid $sq)"
kill -KILL "-$pid"
pid=
echo "PASS"
