#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# bash, a program nobody here wrote, dumped and restored: a loop that keeps a
# counter and a running sum in variables and runs a subshell pipeline every
# round (command substitution: bash forks, the children pipe into each other),
# printing "count sum pipeline-result pid" to a file. After the restore the
# lines must go on from the last count with the sum still consistent, from
# the same pid: a restart or lost variables show as a count back at 1 or a
# wrong sum.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "restore-bash: needs root"; exit 77; }
command -v bash >/dev/null || { echo "restore-bash: bash is not installed"; exit 77; }
command -v setsid >/dev/null || { echo "restore-bash: setsid is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "restore-bash: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log" "$tmp/dump.out" "$tmp/restore.out"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn' "$f" | tail -15; }
	done
	echo "---- output"
	tail -5 "$tmp/out"
	exit 1
}

# The last complete line of the output, and its count.
last_count() { tail -n 1 "$tmp/out" | cut -d' ' -f1; }

wait_count() { # wait_count N: until the count reaches N, 10 s at most
	n=0
	while [ "$(last_count)" -lt "$1" ] 2>/dev/null || [ -z "$(last_count)" ]; do
		n=$((n + 1))
		[ $n -le 100 ] || return 1
		sleep 0.1
	done
}

# Its own session (setsid: not a group leader under sh, so no extra fork),
# no terminal: stdin /dev/null, output to a file.
cat >"$tmp/loop.sh" <<'SCRIPT'
count=0
sum=0
while :; do
	count=$((count + 1))
	sum=$((sum + count))
	word=$(printf 'n%d\n' "$count" | tr 0-9 a-j | cut -c1-8)
	echo "$count $sum $word $$"
	sleep 0.1
done
SCRIPT
setsid bash "$tmp/loop.sh" </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_count 5 || fail "the loop did not start"
[ "$(tail -n 1 "$tmp/out" | cut -d' ' -f4)" = "$pid" ] || fail "bash is not pid $pid"

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -v4 -o dump.log >"$tmp/dump.out" 2>&1 ||
	fail "dump of bash (pid $pid)"
wait "$pid" 2>/dev/null # it was our child: reap it, the pid must be free
before=$(last_count)
"$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o restore.log --pidfile "$tmp/rpid" \
	>"$tmp/restore.out" 2>&1 || fail "restore of bash"
[ "$(cat "$tmp/rpid")" = "$pid" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pid"
wait_count $((before + 5)) || fail "the counter did not go on after $before"
# Stopped before the check, so that no line is being written while it reads.
kill -KILL "$pid"
pid=

# Every line: counts in sequence, sum = count*(count+1)/2, the word, the pid.
awk -v pid="$(cat "$tmp/rpid")" '
	{ exp_sum = $1 * ($1 + 1) / 2; w = "n" $1; gsub(/0/, "a", w); gsub(/1/, "b", w);
	  gsub(/2/, "c", w); gsub(/3/, "d", w); gsub(/4/, "e", w); gsub(/5/, "f", w);
	  gsub(/6/, "g", w); gsub(/7/, "h", w); gsub(/8/, "i", w); gsub(/9/, "j", w);
	  if ($1 != NR || $2 != exp_sum || $3 != substr(w, 1, 8) || $4 != pid) {
		print "line " NR ": " $0; bad = 1; exit 1 } }
	END { exit bad }' "$tmp/out" || fail "the output went wrong (restart or lost state)"
echo "bash counted from 1 to $before, was dumped and restored as pid $(cat "$tmp/rpid"),"
echo "and went on to $(last_count)"
echo "PASS"
