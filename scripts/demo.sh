#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo`: checkpoint a running program, restore it, and show it going on
# from where it was, under the same pid.
set -eu
B=${B:-build}
TOOL=$B/criu-like
DIR=$(mktemp -d /tmp/criu-like-demo.XXXXXX)
pid=

cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

cc -O2 -o "$DIR/counter" scripts/demo/counter.c

step "1. Does this kernel offer what dump and restore need? (criu-like check)"
"$TOOL" check | tail -n 3

step "2. A program that counts and keeps a checksummed history in memory"
# Its own session, so the dump does not need --shell-job.
setsid "$DIR/counter" >"$DIR/counter.out" 2>&1 </dev/null &
pid=$!
sleep 3
tail -n 2 "$DIR/counter.out"

step "3. Checkpoint it: criu-like dump -t $pid -D $DIR/img (the program is killed)"
"$TOOL" dump -t "$pid" -D "$DIR/img" -v3 -o dump.log
grep -h 'frozen\|complete' "$DIR/img/dump.log" | sed 's/^([0-9.]*) //'
sleep 0.2
if kill -0 "$pid" 2>/dev/null; then
	echo "pid $pid still exists"
	exit 1
fi
echo "pid $pid is gone; last line it printed:"
tail -n 1 "$DIR/counter.out"

step "4. The images"
ls -l "$DIR/img" | awk 'NR > 1 { printf "  %-22s %10s bytes\n", $NF, $5 }'
"$TOOL" decode "$DIR/img/pstree.img" | tr -d '\n' | sed 's/  */ /g'
echo
echo "  (criu-like decode $DIR/img shows every image field by field)"

step "5. Restore it: criu-like restore -D $DIR/img -d"
sleep 2
"$TOOL" restore -D "$DIR/img" -d --pidfile "$DIR/pid" -o restore.log
echo "restored pid: $(cat "$DIR/pid")"
sleep 3

step "6. It goes on counting from where it stopped, same pid, same memory"
tail -n 4 "$DIR/counter.out"
kill -0 "$pid"
echo "pid $pid running again"
