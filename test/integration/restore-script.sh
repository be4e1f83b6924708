#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# util-linux script(1) running a shell in a pty, dumped and restored: the
# tree is sh -> { sleep (keeps script's stdin open), script (the pty master)
# -> sh (session leader, the slave as its controlling terminal) }. The inner
# shell's terminal gets non-default settings (window size, -echoctl, erase
# ^H) before the dump; after the restore `stty -g` and `stty size` in that
# shell must print the same, and the shell must still answer a command.
# Keystrokes go in through TIOCSTI on the slave (root may use it on any tty).
# script waits in poll() with no timeout and takes EINTR as the end of its
# session: the restore must restart that poll (arch_restart_adjust()).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "restore-script: needs root"; exit 77; }
command -v script >/dev/null || { echo "restore-script: script is not installed"; exit 77; }
script --version 2>/dev/null | grep -q util-linux ||
	{ echo "restore-script: script is not util-linux's"; exit 77; }
command -v python3 >/dev/null || { echo "restore-script: python3 is not installed"; exit 77; }
command -v setsid >/dev/null || { echo "restore-script: setsid is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "restore-script: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && [ -z "${KEEP:-}" ] && kill -KILL -- "-$pid" 2>/dev/null; [ -z "${KEEP:-}" ] && rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp/img/dump.log" "$tmp/img/restore.log"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|error|warn|refus' "$f" | tail -15; }
	done
	echo "---- output"
	tail -8 "$tmp/out"
	exit 1
}

# type TTY TEXT: TEXT typed on terminal TTY
type() {
	python3 -c 'import fcntl, os, sys, termios
fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
for c in sys.argv[2].encode():
    fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
os.close(fd)' "$1" "$2"
}

wait_for() { # wait_for PATTERN: until a line of the output matches, 10 s at most
	n=0
	until grep -q "$1" "$tmp/out"; do
		n=$((n + 1))
		[ $n -le 100 ] || return 1
		sleep 0.1
	done
}

setsid sh -c 'sleep 1000000 | script -q -c sh /dev/null' </dev/null >"$tmp/out" 2>&1 &
pid=$!
n=0
while :; do
	spid=$(pgrep -P "$pid" -x script)
	[ -n "$spid" ] && shpid=$(pgrep -P "$spid" -x sh) && [ -n "$shpid" ] && break
	n=$((n + 1))
	[ $n -le 100 ] || fail "script and its shell did not start"
	sleep 0.1
done
tty=$(readlink "/proc/$shpid/fd/0")
case "$tty" in /dev/pts/*) ;; *) fail "the shell's stdin is $tty, not a pty" ;; esac

type "$tty" 'stty cols 123 rows 45 -echoctl erase ^H; echo BEFORE $(stty -g) $(stty size) $$
'
wait_for "^BEFORE " || fail "the shell did not answer before the dump"
before=$(grep "^BEFORE " "$tmp/out" | tr -d '\r')
sleep 0.3 # the echo of the command line read by script, nothing left in the queues

"$CRIU_LIKE" dump -t "$pid" -D "$tmp/img" -v4 -o dump.log >/dev/null 2>&1 ||
	fail "dump of the script tree (pid $pid)"
wait "$pid" 2>/dev/null # our child: reap it, its pid and its pty index must be free
"$CRIU_LIKE" restore -D "$tmp/img" -d -v4 -o restore.log --pidfile "$tmp/rpid" \
	>/dev/null 2>&1 || fail "restore of the script tree"
[ "$(cat "$tmp/rpid")" = "$pid" ] || fail "restored as pid $(cat "$tmp/rpid"), not $pid"
[ "$(readlink "/proc/$shpid/fd/0")" = "$tty" ] || fail "the shell's terminal is not $tty"

type "$tty" 'echo AFTER $(stty -g) $(stty size) $$
'
wait_for "^AFTER " || fail "the shell did not answer after the restore"
after=$(grep "^AFTER " "$tmp/out" | tr -d '\r')
[ "${before#BEFORE }" = "${after#AFTER }" ] ||
	fail "terminal settings differ: '$before' then '$after'"
echo "$tty of script's shell (pid $shpid): $after"
echo "PASS"
