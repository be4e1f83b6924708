#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# infect-test on a two-process tree in its own network and pid namespaces
# (the control socket must be created there; the parasite sees other
# pids), each task with a POSIX timer, a
# sigaltstack, an ignored signal and pipes: 20 cycles without a mismatch.
# Then a pid that does not exist must be refused with a message.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/infect-victim
[ "$(id -u)" = 0 ] || { echo "infect-basic: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "infect-basic: build first"; exit 1; }
command -v unshare >/dev/null || exit 77

tmp=$(mktemp -d)
unshare -n -p -f "$V" tree &
up=$!
vp=
trap 'kill -KILL $vp $up 2>/dev/null; rm -rf "$tmp"' EXIT
sleep 0.3
# unshare forks the victim: pid 1 of the new pid namespace, killing it ends the namespace.
vp=$(cut -d' ' -f1 /proc/$up/task/$up/children)
[ -n "$vp" ] || { echo "FAIL: no victim under unshare"; exit 1; }
fail=0
if [ "$(readlink /proc/$vp/ns/net)" = "$(readlink /proc/self/ns/net)" ]; then
	echo "FAIL: the victim is not in its own network namespace"
	fail=1
fi
"$CRIU_LIKE" infect-test -t "$vp" --cycles 20 -v4 -o "$tmp/log" >"$tmp/out" 2>&1 || {
	echo "FAIL: infect-test on the tree"
	grep -h 'Error' "$tmp/out" "$tmp/log" | head -20
	fail=1
}
cat "$tmp/out"
grep -q '^infect-test: 20 cycles, 40 task infections, 0 mismatches' "$tmp/out" || fail=1
grep -q '1 POSIX timers' "$tmp/log" || { echo "FAIL: the POSIX timer was not reported"; fail=1; }
grep -q 'altstack [0-9a-f]*/10000 flags 0' "$tmp/log" || { echo "FAIL: no sigaltstack reported"; fail=1; }
# back_to_sleep PID: the task sleeps again (in pause()) within a second; just
# after the cure it may still be on its way back (R) on a loaded machine.
back_to_sleep() {
	n=0
	while [ "$(sed -n 's/^State:\t\(.\).*/\1/p' /proc/$1/status)" != S ]; do
		n=$((n + 1))
		[ $n -le 100 ] || return 1
		sleep 0.01
	done
}

# Without a vDSO the trampoline borrows the task's own code: it must still work.
"$V" novdso &
np=$!
sleep 0.2
if grep -q '\[vdso\]' /proc/$np/maps; then
	echo "FAIL: the novdso victim still has a vDSO"
	fail=1
elif ! "$CRIU_LIKE" infect-test -t "$np" --cycles 5 >"$tmp/out" 2>&1 ||
	! grep -q 'has no vDSO' "$tmp/out" || ! back_to_sleep "$np"; then
	echo "FAIL: infect-test without a vDSO"
	cat "$tmp/out"
	fail=1
fi
kill -KILL "$np"
# A task whose seccomp filter forbids socket(): the seize suspends its
# filters (PTRACE_O_SUSPEND_SECCOMP), so the parasite connects; after the
# cure the filter applies again (the victim counts socket() calls that did
# not fail with EPERM).
"$V" seccomp >"$tmp/sc" &
sc=$!
sleep 0.2
if ! "$CRIU_LIKE" infect-test -t "$sc" >"$tmp/out" 2>&1; then
	echo "FAIL: infect-test of a task with a seccomp filter: $(cat "$tmp/out")"
	fail=1
fi
sleep 0.1
if ! tail -n 1 "$tmp/sc" | grep -q 'errors 0$'; then
	echo "FAIL: the seccomp filter no longer applies after the cure: $(tail -n 1 "$tmp/sc")"
	fail=1
fi
n1=$(tail -n 1 "$tmp/sc")
sleep 0.1
n2=$(tail -n 1 "$tmp/sc")
if [ "$n1" = "$n2" ] || grep -q 'rwxs .* /dev/zero (deleted)' /proc/$sc/maps ||
	[ "$(sed -n 's/^TracerPid:\t//p' /proc/$sc/status)" != 0 ]; then
	echo "FAIL: the seccomp task is stuck, traced or keeps the area ($n1 / $n2)"
	fail=1
fi
kill -KILL "$sc"
if "$CRIU_LIKE" infect-test -t 999999999 >"$tmp/out" 2>&1; then
	echo "FAIL: infect-test of a pid that does not exist succeeded"
	fail=1
elif ! grep -q '999999999' "$tmp/out"; then
	echo "FAIL: refusal without the pid: $(cat "$tmp/out")"
	fail=1
fi
[ $fail = 0 ] && echo "infect-basic: tree in its own net and pid namespaces infected 20 times, task without vDSO infected, task with a seccomp filter infected and still filtered, bad pid refused"
exit $fail
