#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Objects criu-like does not restore yet are refused at dump by name, and the
# task runs on: an io_uring with a request in flight or with a submission
# thread (also among 100 threads, which the seize checks side by side; an
# idle ring is restored: zdtm io_uring_idle), and a pidfd of a
# thread (PIDFD_THREAD) held only in a unix socket's queue, and a child
# process sharing its parent's address space (a vfork child before its exec:
# restored as two it would get an address space of its own). (AIO contexts
# are dumped now: zdtm aio_ring.)
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/refused-victim
[ "$(id -u)" = 0 ] || { echo "refused: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "refused: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
V=$(realpath "$V")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

try() { # WHAT TEXT: the refusal must hold TEXT (%P: the pid)
	rm -rf "$tmp/img" "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in"
	setsid "$V" "$1" <"$tmp/in" >"$tmp/out" 2>&1 &
	vp=$!
	exec 3>"$tmp/in"
	n=0
	until grep -q '^ready' "$tmp/out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 500 ] || fail "$1: victim did not start: $(cat "$tmp/out")"
		sleep 0.01
	done
	if "$CRIU_LIKE" dump -t "$vp" -D "$tmp/img" >"$tmp/dump.out" 2>&1; then
		fail "$1: dumped"
	fi
	want=$(printf '%s' "$2" | sed "s/%P/$vp/g")
	grep -qF "$want" "$tmp/dump.out" || fail "$1: the refusal does not say '$want': $(cat "$tmp/dump.out")"
	printf x >&3
	n=0
	until grep -qx 'x' "$tmp/out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 500 ] || fail "$1: the victim does not echo after the refusal"
		sleep 0.01
	done
	exec 3>&-
	kill -KILL "$vp" 2>/dev/null
	wait "$vp" 2>/dev/null
	vp=
	echo "refused: $1 refused by name, the task runs on"
}

try io_uring-poll "an io_uring instance with requests in flight (armed polls: fdinfo PollList): not supported"
try io_uring-sqpoll "is an io_uring kernel thread (iou-sqp, IORING_SETUP_SQPOLL)"
try io_uring-sqpoll-threads "is an io_uring kernel thread (iou-sqp, IORING_SETUP_SQPOLL)"
try pidfd-thread-scm "a pidfd of thread"
try pidfd-thread-scm "in flight in a unix socket's queue and held by no task: not restored"
try clone-vm "shares its address space with pid %P (CLONE_VM without CLONE_THREAD"
