#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A chain of pre-dumps under a writing workload (Documentation/memory.md,
# section 3): three pre-dumps while the victim writes at random and moves a
# region, then dump --prev-images-dir; the restored memory must equal, page
# by page, what the victim held at the dump. The last dump must point into
# its parents (PE_PARENT) and be smaller than the memory. A missing parent
# and a corrupt one are refused by name; a failed pre-dump leaves the tree
# running with no keeper.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
[ "$(id -u)" = 0 ] || { echo "predump-chain: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "predump-chain: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
C=$CRIU_LIKE

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	umount "$tmp/full" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

. "$(dirname "$0")/victim-steps.inc"

setsid "$V" 16 "$tmp/mem" >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_line ready

# A failed pre-dump (a 64 KiB file system): the tree runs on, nothing tracks it.
mkdir "$tmp/full"
mount -t tmpfs -o size=64k tmpfs "$tmp/full"
if "$C" pre-dump -t $vp -D "$tmp/full/img" -o "$tmp/pd0.log" 2>/dev/null; then
	echo "FAIL: a pre-dump into 64 KiB succeeded"
	fail=1
fi
umount "$tmp/full"
grep -q "pre-dump of $vp failed" "$tmp/pd0.log" ||
	{ echo "FAIL: the failed pre-dump does not say so"; fail=1; }
st=$(awk '/^TracerPid:/ { print $2 }' /proc/$vp/status)
[ "$st" = 0 ] || { echo "FAIL: the victim is traced after a failed pre-dump"; fail=1; }

prev=
for i in 1 2 3; do
	"$C" pre-dump -t $vp -D "$tmp/i$i" ${prev:+--prev-images-dir "$prev"} -v4 \
		-o "$tmp/pd$i.log" || { echo "FAIL: pre-dump $i"; tail -5 "$tmp/pd$i.log"; exit 1; }
	prev=../i$i
	sleep 0.3
done
kill -USR2 $vp
wait_line quiet
"$C" dump -t $vp -D "$tmp/i4" --prev-images-dir ../i3 -v4 -o "$tmp/d4.log" ||
	{ echo "FAIL: dump --prev-images-dir"; tail -5 "$tmp/d4.log"; exit 1; }
vp=

"$C" decode "$tmp/i4/pagemap-"*.img | grep -q '"flags": 2' ||
	{ echo "FAIL: the last dump has no PE_PARENT entries"; fail=1; }
size=$(stat -c %s "$tmp"/i4/pages-*.img | awk '{ s += $1 } END { print s }')
[ "$size" -lt $((8 << 20)) ] ||
	{ echo "FAIL: the last dump wrote $size bytes of pages for 16 MiB"; fail=1; }

# A missing parent, then a corrupt one: refused, naming it.
mv "$tmp/i3" "$tmp/i3x"
if "$C" restore -D "$tmp/i4" -d -o "$tmp/r-missing.log" 2>/dev/null; then
	echo "FAIL: restore without its parent succeeded"
	fail=1
fi
grep -q "parent" "$tmp/r-missing.log" ||
	{ echo "FAIL: the missing parent is not named"; fail=1; }
mv "$tmp/i3x" "$tmp/i3"
p1=$(ls "$tmp"/i1/pages-*.img)
off=$(( $(stat -c %s "$p1") / 2 ))
orig=$(dd if="$p1" bs=1 skip=$off count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
printf "\\$(printf %o $(( (orig + 1) % 256 )))" | dd of="$p1" bs=1 seek=$off conv=notrunc 2>/dev/null
if "$C" restore -D "$tmp/i4" -d -o "$tmp/r-corrupt.log" 2>/dev/null; then
	echo "FAIL: restore with a corrupt parent succeeded"
	fail=1
	pkill -KILL -f "predump-victim 16 $tmp/mem"
fi
grep -q "corrupt" "$tmp/r-corrupt.log" ||
	{ echo "FAIL: the corrupt parent is not named"; fail=1; }
printf "\\$(printf %o $orig)" | dd of="$p1" bs=1 seek=$off conv=notrunc 2>/dev/null

"$C" restore -D "$tmp/i4" -d --pidfile "$tmp/pid" -o "$tmp/r.log" ||
	{ echo "FAIL: restore of the chain"; tail -5 "$tmp/r.log"; exit 1; }
vp=$(cat "$tmp/pid")
restored_memory_same
[ $fail = 0 ] && echo "predump-chain: ok ($size bytes in the last dump, 4 images)"
exit $fail
