#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A task that unmapped its [vdso] and [vvar] is refused at dump, naming the
# pid and the area (its restore would crash at the resume), and it runs on:
# it still echoes what it is sent.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/vdso-victim
[ "$(id -u)" = 0 ] || { echo "vdso-refused: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "vdso-refused: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

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

mkfifo "$tmp/in"
setsid "$V" <"$tmp/in" >"$tmp/out" 2>&1 &
vp=$!
exec 3>"$tmp/in"
n=0
until grep -q '^ready' "$tmp/out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 500 ] || fail "victim did not start: $(cat "$tmp/out")"
	sleep 0.01
done
if "$CRIU_LIKE" dump -t "$vp" -D "$tmp/img" >"$tmp/dump.out" 2>&1; then
	fail "a task without its [vdso] was dumped"
fi
grep -q "pid $vp: it unmapped its \[vdso\]: a task without the vDSO is not supported yet" \
	"$tmp/dump.out" || fail "the refusal does not name the pid and [vdso]: $(cat "$tmp/dump.out")"
printf x >&3
n=0
until grep -qx 'x' "$tmp/out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 500 ] || fail "the victim does not echo after the refused dump: $(cat "$tmp/out")"
	sleep 0.01
done
echo "vdso-refused: refused by name, the task runs on"
