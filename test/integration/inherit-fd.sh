#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# --inherit-fd fd[N]:pipe:[INO] (what runc passes as the RPC's inherit_fd for
# a container's stdio): a shell counting on its stdout, a pipe whose reader
# is outside the tree, dumped; restored with its stdout being criu-like's
# own stdout, another pipe: the new reader gets the count going on from
# where it was. A key that is not a pipe's is refused by name.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "inherit-fd: needs root"; exit 77; }
command -v setsid >/dev/null || { echo "inherit-fd: setsid (util-linux) is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "inherit-fd: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.log "$tmp"/*.err; do
		[ -s "$f" ] && { echo "---- $f"; tail -8 "$f"; }
	done
	exit 1
}
wait_lines() { # wait_lines FILE N WHAT: until FILE has more than N lines
	i=0
	while [ "$(wc -l <"$1")" -le "$2" ]; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$3: nothing more written"; sleep 0.02
	done
}

: >"$tmp/out1"
(setsid sh -c 'echo $$ >"$1"; i=0; while :; do i=$((i + 1)); echo $i; sleep 0.02; done' \
	sh "$tmp/pid" </dev/null 2>/dev/null | cat >"$tmp/out1") 2>/dev/null &
wait_lines "$tmp/out1" 5 "start"
pid=$(cat "$tmp/pid")
key=$(readlink "/proc/$pid/fd/1")
case $key in pipe:*) ;; *) fail "the victim's stdout is $key, not a pipe" ;; esac

"$CRIU_LIKE" restore -D "$tmp" --inherit-fd "fd[1]:tmp/file" >"$tmp/refused.err" 2>&1 &&
	fail "an --inherit-fd key that is not a pipe was taken"
grep -q "inherit-fd: 'fd\[1\]:tmp/file' is not a pipe" "$tmp/refused.err" ||
	fail "the refusal does not name the key"

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -o dump.log || fail "dump"
sleep 0.1
last=$(tail -n1 "$tmp/out1")

: >"$tmp/out2"
("$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o restore.log --inherit-fd "fd[1]:$key" \
	2>"$tmp/restore.err"; echo $? >"$tmp/rc") | cat >"$tmp/out2" &
i=0
while [ ! -s "$tmp/rc" ]; do
	i=$((i + 1)); [ $i -gt 500 ] && fail "restore does not return"; sleep 0.02
done
[ "$(cat "$tmp/rc")" = 0 ] || fail "restore --inherit-fd fd[1]:$key"
wait_lines "$tmp/out2" 3 "after restore"
first=$(head -n1 "$tmp/out2")
[ "$first" = $((last + 1)) ] || fail "the new reader got $first first, $last was the last before"
grep -qF "$key is the inherited fd 1" "$tmp/img/restore.log" || fail "restore.log does not say it"
echo "inherit-fd: the count went on in the inherited pipe: $last before the dump, $first after"
