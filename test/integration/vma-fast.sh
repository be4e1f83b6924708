#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The VMAs read without smaps' walk (Documentation/memory.md, "The VMAs
# without smaps' walk") give the same images as smaps: the victim
# (vma-fast-victim.c: a VMA of each kind the dump asks smaps about, and two
# children sharing its memory) is dumped with --leave-running twice, once
# through smaps (CRIU_LIKE_TEST_VMA_FAST_MIN above its size) and once the
# other way (0); every mm-*.img and pagemap-*.img must decode the same (the
# pages images' numbering aside: the two workers take the tasks in any
# order; and the runs' checksums: the kernel writes into a task's memory
# between the two dumps, rseq's cpu_id when the task moved to another CPU),
# and the second dump must have taken that way for every task.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/vma-fast-victim
[ "$(id -u)" = 0 ] || { echo "vma-fast: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "vma-fast: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" $(cat "/proc/$vp/task/$vp/children" 2>/dev/null) 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

setsid "$V" "$tmp" >"$tmp/out" 2>&1 </dev/null &
vp=$!
n=0
until grep -q ready "$tmp/out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || { echo "FAIL: the victim never got ready"; cat "$tmp/out"; exit 1; }
	sleep 0.01
done
mkdir "$tmp/smaps" "$tmp/fast"
CRIU_LIKE_TEST_VMA_FAST_MIN=999999999999 "$C" dump -R -t "$vp" -D "$tmp/smaps" -v4 -o d.log ||
	{ echo "FAIL: the dump through smaps"; exit 1; }
CRIU_LIKE_TEST_VMA_FAST_MIN=0 "$C" dump -R -t "$vp" -D "$tmp/fast" -v4 -o d.log ||
	{ echo "FAIL: the dump without smaps' walk"; exit 1; }
if grep -q "without smaps' walk" "$tmp/smaps/d.log" ||
	! grep -q "the VMAs read without smaps' walk" "$tmp/fast/d.log"; then
	echo "FAIL: the two dumps did not read the VMAs the two ways"
	exit 1
fi
if grep -q "smaps read (its VMAs need it)" "$tmp/fast/d.log"; then
	echo "FAIL: a task of the victim was read through smaps after all:"
	grep "smaps read (its VMAs need it)" "$tmp/fast/d.log"
	exit 1
fi
fail=0
nf=0
for f in "$tmp"/smaps/mm-*.img "$tmp"/smaps/pagemap-*.img; do
	g=$tmp/fast/$(basename "$f")
	"$C" decode "$f" | grep -v '"pages_id"\|"crc32c"' >"$tmp/a.json" &&
		"$C" decode "$g" | grep -v '"pages_id"\|"crc32c"' >"$tmp/b.json" ||
		{ echo "FAIL: cannot decode $(basename "$f")"; fail=1; continue; }
	if ! cmp -s "$tmp/a.json" "$tmp/b.json"; then
		echo "FAIL: $(basename "$f") differs:"
		diff "$tmp/a.json" "$tmp/b.json" | head -20
		fail=1
	fi
	nf=$((nf + 1))
done
[ "$nf" -ge 6 ] || { echo "FAIL: $nf images compared, 6 expected (3 tasks)"; fail=1; }
"$C" decode "$tmp/fast/mm-$vp.img" | grep -q '"thp": true' ||
	echo "note: no VMA saved with thp (no free huge page for MADV_COLLAPSE?)"
[ $fail = 0 ] && echo "PASS: $nf images the same both ways"
exit $fail
