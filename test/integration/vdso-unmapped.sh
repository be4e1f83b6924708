#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A task that unmapped its [vdso] and [vvar] is dumped and restored without
# them: the restored task has no [vdso], [vvar] or [vvar_vclock] and still
# echoes what it is sent (its code, which the dump's injection borrowed for
# want of a vDSO, came back intact). A dump with -R leaves it running as well.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/vdso-victim
[ "$(id -u)" = 0 ] || { echo "vdso-unmapped: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "vdso-unmapped: build first"; exit 1; }
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
# echo_check BYTE: the victim echoes BYTE (its output ends with it)
echo_check() {
	printf "%s" "$1" >&3
	n=0
	until [ "$(tail -c 1 "$tmp/out")" = "$1" ]; do
		n=$((n + 1))
		[ $n -le 500 ] || fail "$2: the victim does not echo: $(cat "$tmp/out")"
		sleep 0.01
	done
}
no_specials() {
	if grep -E '\[(vdso|vvar|vvar_vclock)\]' "/proc/$vp/maps"; then
		fail "$1: the task has a vDSO area again"
	fi
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
"$CRIU_LIKE" dump -R -t "$vp" -D "$tmp/img1" >"$tmp/dump1.out" 2>&1 ||
	fail "dump -R: $(cat "$tmp/dump1.out")"
echo_check a "after dump -R"
no_specials "after dump -R"
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img" >"$tmp/dump.out" 2>&1 ||
	fail "dump: $(cat "$tmp/dump.out")"
n=0
while kill -0 "$vp" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 500 ] || fail "the victim outlived its dump"
	sleep 0.01
done
"$CRIU_LIKE" restore -d -D "$tmp/img" >"$tmp/restore.out" 2>&1 ||
	fail "restore: $(cat "$tmp/restore.out")"
kill -0 "$vp" 2>/dev/null || fail "the restored victim is not there"
no_specials "after the restore"
echo_check b "after the restore"
echo_check c "after the restore"
echo "vdso-unmapped: dumped and restored without its vDSO, the task runs on"
