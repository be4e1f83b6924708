#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# python3, a program nobody here wrote, dumped and restored while it holds a
# dict of 100,000 items and a generator stopped in the middle of its
# iteration. It answers requests dropped into a file with the dict's size,
# a checksum over its items and the generator's next value. After the
# restore it must answer from the same pid with the same size and checksum,
# and the generator must go on where it stopped (a fresh start would give 0).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "restore-python: needs root"; exit 77; }
PY=$(command -v python3 2>/dev/null) && "$PY" -c 'pass' 2>/dev/null ||
	{ echo "restore-python: python3 is not installed"; exit 77; }
command -v setsid >/dev/null || { echo "restore-python: setsid is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "restore-python: build first ($CRIU_LIKE)"; exit 1; }
# The interpreter itself, not a wrapper (pyenv shims are shell scripts).
PY=$("$PY" -c 'import sys; print(sys.executable)')

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log" "$tmp/dump.out" "$tmp/restore.out" \
		"$tmp/err"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn|Traceback' "$f" | tail -15; }
	done
	exit 1
}

cat >"$tmp/server.py" <<'PYTHON'
import os, sys, time

d = {"key%06d" % i: i * 7 for i in range(100000)}
gen = (k for k in sorted(d))
taken = [next(gen) for _ in range(500)]  # stopped mid-iteration
req, ans = sys.argv[1], sys.argv[2]
while True:
    if os.path.exists(req):
        os.unlink(req)
        line = "%d %d %s %d\n" % (len(d), sum(d.values()) % 1000003, next(gen), os.getpid())
        with open(ans + ".tmp", "w") as f:
            f.write(line)
        os.rename(ans + ".tmp", ans)
    time.sleep(0.02)
PYTHON

# ask: drop a request, wait for the answer (10 s), print it.
ask() {
	rm -f "$tmp/ans"
	: >"$tmp/req"
	n=0
	until [ -s "$tmp/ans" ]; do
		n=$((n + 1))
		[ $n -le 500 ] || return 1
		sleep 0.02
	done
	cat "$tmp/ans"
}

setsid "$PY" "$tmp/server.py" "$tmp/req" "$tmp/ans" </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!
first=$(ask) || fail "python did not answer"
set -- $first
[ "$1" = 100000 ] && [ "$3" = key000500 ] && [ "$4" = "$pid" ] ||
	fail "unexpected first answer: $first"
sum=$2

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -v4 -o dump.log >"$tmp/dump.out" 2>&1 ||
	fail "dump of python (pid $pid)"
wait "$pid" 2>/dev/null
"$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o restore.log --pidfile "$tmp/rpid" \
	>"$tmp/restore.out" 2>&1 || fail "restore of python"
[ "$(cat "$tmp/rpid")" = "$pid" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pid"
second=$(ask) || fail "python did not answer after the restore"
set -- $second
[ "$1" = 100000 ] && [ "$2" = "$sum" ] && [ "$3" = key000501 ] && [ "$4" = "$pid" ] ||
	fail "after the restore: \"$second\", expected \"100000 $sum key000501 $pid\""
echo "before: $first"
echo "after:  $second"
kill -KILL "$pid"
pid=
echo "PASS"
