#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Sparse unlinked files (Documentation/files.md): a shell holding an unlinked
# 1 GiB file with 4 bytes of data at 300 MiB. Without --ghost-limit the dump
# is refused as CRIU refuses it (1 MiB by default), naming the file, and the
# shell runs on; with --ghost-limit 2G the ghost image takes a few KiB on
# disk, not 1 GiB, and the restored file is as sparse, with its data.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ghost-sparse: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ghost-sparse: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
rp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	[ -n "$rp" ] && kill -KILL "$rp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

cd "$tmp" || exit 1
setsid sh -c 'truncate -s 1G big && printf data | dd of=big bs=1M seek=300 conv=notrunc 2>/dev/null &&
	exec 3<big && rm big && echo ready && while :; do sleep 0.1; done' >victim 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' victim 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || fail "victim did not start: $(cat victim)"
	sleep 0.01
done

# CRIU's default limit: refused by name, the shell untouched
if "$CRIU_LIKE" dump -t "$vp" -D "$tmp/img0" >dump0.out 2>&1; then
	fail "a 1 GiB unlinked file was dumped without --ghost-limit"
fi
grep -q "unlinked $tmp/big has 1073741824 bytes, more than --ghost-limit 1048576" dump0.out ||
	fail "the refusal does not name the file and the limit: $(cat dump0.out)"
kill -0 "$vp" 2>/dev/null || fail "the shell died after the refused dump"
state=$(sed 's/.*) //' "/proc/$vp/stat" | cut -d' ' -f1)
[ "$state" != T ] && [ "$state" != t ] || fail "the shell is left stopped ($state)"

"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img" --ghost-limit 2G >dump.out 2>&1 ||
	fail "dump with --ghost-limit 2G: $(cat dump.out)"
vp=
kib=$(du -k -c "$tmp"/img/ghost-*.img | tail -1 | cut -f1)
echo "ghost image: $kib KiB on disk for an unlinked 1 GiB file with 4 bytes of data"
[ "$kib" -lt 1024 ] || fail "the ghost image takes $kib KiB: written densely"

"$CRIU_LIKE" restore -D "$tmp/img" -d --pidfile "$tmp/pid" >restore.out 2>&1 ||
	fail "restore: $(cat restore.out)"
rp=$(cat "$tmp/pid")
size=$(stat -L -c %s "/proc/$rp/fd/3")
alloc=$(($(stat -L -c %b "/proc/$rp/fd/3") * $(stat -L -c %B "/proc/$rp/fd/3")))
data=$(dd if="/proc/$rp/fd/3" bs=1M skip=300 count=1 2>/dev/null | head -c 4)
echo "restored: size $size, $alloc bytes allocated, data '$data'"
[ "$size" = 1073741824 ] || fail "restored size $size"
[ "$alloc" -lt 1048576 ] || fail "the restored file has $alloc bytes allocated: no longer sparse"
[ "$data" = data ] || fail "the data at 300 MiB is '$data'"
echo "ghost-sparse: ok"
