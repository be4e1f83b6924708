#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Sharing of an fs context or an fd table that criu-like cannot restore is
# refused at dump by name, and the tree runs on: two siblings sharing one
# fs context (CLONE_FS) that their parent left, a thread with an fs context
# or an fd table of its own (unshare), a shared fs context whose root is a
# chroot, and a process sharing its fs context with its parent outside the
# tree; two siblings sharing one fd table (CLONE_FILES) that their parent
# left, and a process sharing its fd table with its parent outside the tree.
# (Sharing with the parent is restored: zdtm clone_fs and clone_files.)
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/share-victim
[ "$(id -u)" = 0 ] || { echo "share-refused: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "share-refused: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
V=$(realpath "$V")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && pkill -KILL -s "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

# one case: the shape, then the text the refusal must hold (%P: the dumped pid)
try() {
	how=$1
	want=$2
	shift 2
	rm -rf "$tmp/img" "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in"
	# stdin through a pipe from cat: a FIFO's path would be outside a chroot
	setsid sh -c 'cat "$1" | "$2" "$3" "$4"' sh "$tmp/in" "$V" "$how" "${1:-}" \
		>"$tmp/out" 2>&1 &
	vp=$!
	exec 3>"$tmp/in"
	n=0
	until grep -q '^ready' "$tmp/out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 500 ] || fail "$how: victim did not start: $(cat "$tmp/out")"
		sleep 0.01
	done
	dp=$(sed -n 's/^ready //p' "$tmp/out")
	if "$CRIU_LIKE" dump --shell-job -t "$dp" -D "$tmp/img" >"$tmp/dump.out" 2>&1; then
		fail "$how: dumped"
	fi
	want=$(printf '%s' "$want" | sed "s/%P/$dp/g")
	grep -qF "$want" "$tmp/dump.out" ||
		fail "$how: the refusal does not say '$want': $(cat "$tmp/dump.out")"
	printf x >&3
	n=0
	until grep -qx 'x' "$tmp/out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 500 ] || fail "$how: the victim does not echo after the refusal"
		sleep 0.01
	done
	exec 3>&-
	pkill -KILL -s "$vp" 2>/dev/null
	wait "$vp" 2>/dev/null
	vp=
	echo "share-refused: $how refused by name, the tree runs on"
}

try fs-sibling "shares its fs context (cwd, root, umask) with pid"
try fs-thread "has an fs context (cwd, root, umask) of its own (unshare(CLONE_FS))"
try files-thread "has an fd table of its own (unshare(CLONE_FILES))"
# the same two with the BPF task iterator (dump/thread-facts.c) telling the threads apart
export CRIU_LIKE_TASK_BPF=1
try fs-thread "has an fs context (cwd, root, umask) of its own (unshare(CLONE_FS))"
try files-thread "has an fd table of its own (unshare(CLONE_FILES))"
unset CRIU_LIKE_TASK_BPF
try files-sibling "shares its fd table with pid"
try files-outside "pid %P shares its fd table with its parent"
mkdir "$tmp/root"
try fs-chroot "shares its fs context with its parent %P and its root is $tmp/root" "$tmp/root"
try fs-outside "pid %P shares its fs context (cwd, root, umask) with its parent"
