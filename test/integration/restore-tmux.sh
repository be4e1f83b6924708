#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A tmux server with a session running a shell, dumped and restored. The
# server (its own session, bound unix socket, pty masters) is the tree; the
# pane's shell leads a session with the pane's pty as its terminal. Before
# the dump the shell prints a marker; after the restore capture-pane must
# show the same screen, a window size query through the shell must give the
# pane's size, and the shell must answer a new command.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "restore-tmux: needs root"; exit 77; }
command -v tmux >/dev/null || { echo "restore-tmux: tmux is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "restore-tmux: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
sock="$tmp/sock"
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

t() { tmux -S "$sock" "$@"; }

fail() {
	echo "FAIL: $*"
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn|refus' "$f" | tail -15; }
	done
	echo "---- pane"
	t capture-pane -p -t crtest 2>&1 | grep . | tail -8
	exit 1
}

wait_pane() { # wait_pane PATTERN: until the pane shows it, 10 s at most
	n=0
	until t capture-pane -p -t crtest 2>/dev/null | grep -q "$1"; do
		n=$((n + 1))
		[ $n -le 100 ] || return 1
		sleep 0.1
	done
}

t -f /dev/null new-session -d -s crtest -x 100 -y 30 sh || fail "tmux did not start"
pid=$(t display-message -p '#{pid}')
[ -n "$pid" ] || fail "no tmux server pid"
t send-keys -t crtest 'echo BEFORE $(stty size) $$' Enter
wait_pane "^BEFORE " || fail "the shell did not answer before the dump"
shpid=$(t capture-pane -p -t crtest | sed -n 's/^BEFORE .* //p' | head -n 1)
sleep 0.5 # the server has drawn everything: nothing in flight on the pty
before=$(t capture-pane -p -t crtest)

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -v4 -o dump.log >/dev/null 2>&1 ||
	fail "dump of the tmux server (pid $pid)"
n=0
while kill -0 "$pid" 2>/dev/null; do # not our child: wait until it is gone
	n=$((n + 1))
	[ $n -le 50 ] || fail "the dumped server did not go away"
	sleep 0.1
done
"$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o restore.log --pidfile "$tmp/rpid" \
	>/dev/null 2>&1 || fail "restore of the tmux server"
[ "$(cat "$tmp/rpid")" = "$pid" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pid"
after=$(t capture-pane -p -t crtest) || fail "tmux cannot talk to the restored server"
[ "$before" = "$after" ] || fail "the pane changed: '$before' then '$after'"

t send-keys -t crtest 'echo AFTER $(stty size) $$' Enter
wait_pane "^AFTER " || fail "the shell did not answer after the restore"
got=$(t capture-pane -p -t crtest | grep "^AFTER " | head -n 1)
[ "$got" = "AFTER 30 100 $shpid" ] || fail "the shell printed '$got', not 'AFTER 30 100 $shpid'"
echo "tmux server $pid restored, pane shell $shpid: $got"
t kill-server
pid=
echo "PASS"
