#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A restore refuses an image directory that is not what its dump wrote, names
# the file (and for a page run, the byte offset), and creates nothing:
#   a. pipes-data.img deleted (the pipe would come back without its 1000 bytes)
#   b. pagemap-shmem-*.img deleted (shared memory would come back as zeros)
#   c. pages-N.img truncated
#   d. a byte flipped inside a page run, of the task's pages and of the shared
#      memory's (the first is found by the restorer, in the restored task)
#   e. check-images exits non-zero on each of them, 0 on the dump as it was
#   g. a byte flipped in the pages a forked child shares with its parent,
#      which the restore maps before the forks (and checks as it reads them):
#      refused the same way, no task left
#   f. files the dump did not write (a note, a restore.log, the restore.log
#      of a restore with -v4) change nothing: it restores, twice, and the
#      pipe's data and both memories come back.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/image-victim
[ "$(id -u)" = 0 ] || { echo "image-check: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "image-check: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

# ready FILE WHAT: until a victim writing to FILE says "ready", 10 s at most.
ready() {
	n=0
	until grep -q '^ready' "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: $2 did not start"; exit 1; }
		sleep 0.01
	done
}

setsid "$V" >"$tmp/out" 2>&1 </dev/null &
ready "$tmp/out" "the victim"
vp=$(awk '/^ready/ { print $2 }' "$tmp/out")
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/good" || { echo "FAIL: dump of $vp"; exit 1; }
wait 2>/dev/null

# pages_of PAGEMAP: the pages_id in the head of that pagemap image.
pages_of() {
	"$CRIU_LIKE" decode "$1" | awk '/"pages_id"/ { gsub(/[^0-9]/, ""); print; exit }'
}
pages=pages-$(pages_of "$tmp/good/pagemap-$vp.img").img
shmap=$(cd "$tmp/good" && ls pagemap-shmem-*.img)
shpages=pages-$(pages_of "$tmp/good/$shmap").img

# copy NAME: a copy of the dump to spoil.
copy() {
	rm -rf "${tmp:?}/$1"
	cp -a "$tmp/good" "$tmp/$1"
}

# flip FILE OFFSET: invert the byte at OFFSET.
flip() {
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# refused NAME PATTERN: restore -D NAME fails, says PATTERN on stderr, leaves no task.
refused() {
	if "$CRIU_LIKE" restore -d -D "$tmp/$1" 2>"$tmp/$1.err"; then
		echo "FAIL: $1: restored (exit 0), a refusal naming '$2' was expected"
		kill -KILL "$vp" 2>/dev/null
		fail=1
	elif ! grep -q "$2" "$tmp/$1.err"; then
		echo "FAIL: $1: refused, but stderr lacks '$2':"
		cat "$tmp/$1.err"
		fail=1
	fi
	if [ -d "/proc/$vp" ]; then
		echo "FAIL: $1: pid $vp is left behind"
		kill -KILL "$vp" 2>/dev/null
		fail=1
	fi
}

# checked NAME PATTERN: check-images NAME fails and says PATTERN on stderr.
checked() {
	if "$CRIU_LIKE" check-images "$tmp/$1" >/dev/null 2>"$tmp/$1.chk"; then
		echo "FAIL: check-images $1: exit 0, '$2' was expected"
		fail=1
	elif ! grep -q "$2" "$tmp/$1.chk"; then
		echo "FAIL: check-images $1: stderr lacks '$2':"
		cat "$tmp/$1.chk"
		fail=1
	fi
}

copy nopipe
rm "$tmp/nopipe/pipes-data.img"
refused nopipe "image pipes-data.img is missing"
checked nopipe "image pipes-data.img is missing"

copy noshm
rm "$tmp/noshm/$shmap"
refused noshm "image $shmap is missing"
checked noshm "image $shmap is missing"

copy trunc
size=$(stat -c %s "$tmp/trunc/$pages")
truncate -s $((size - 4096)) "$tmp/trunc/$pages"
refused trunc "image $pages is $((size - 4096)) bytes, the dump wrote $size"
checked trunc "image $pages is $((size - 4096)) bytes"

# the first run's data starts at byte 4096 of a pages image
copy flip
flip "$tmp/flip/$pages" 4100
if grep -qw sse4_2 /proc/cpuinfo; then
	refused flip "$pages: offset 4096: page run checksum mismatch"
else
	echo "no SSE4.2: the restorer does not check page runs, skipped that restore"
fi
checked flip "$pages: offset 4096: page run checksum mismatch"

copy flipshm
flip "$tmp/flipshm/$shpages" 4100
refused flipshm "$shpages: offset 4096: page run checksum mismatch"
checked flipshm "$shpages: offset 4096: page run checksum mismatch"

if ! "$CRIU_LIKE" check-images "$tmp/good" >"$tmp/good.chk" 2>&1; then
	echo "FAIL: check-images of the dump as it was:"
	cat "$tmp/good.chk"
	fail=1
fi

copy notes
echo "a note" >"$tmp/notes/NOTES"
echo "an old log" >"$tmp/notes/restore.log"
# the first restore logs into the directory (restore.log), the second finds it there
if ! "$CRIU_LIKE" restore -d -v4 -D "$tmp/notes" 2>"$tmp/notes.err"; then
	echo "FAIL: notes: not restored:"
	tail -5 "$tmp/notes.err"
	exit 1
fi
kill -KILL "$vp"
n=0
while [ -d "/proc/$vp" ] && [ $n -lt 500 ]; do
	n=$((n + 1))
	sleep 0.01
done
if ! "$CRIU_LIKE" restore -d -D "$tmp/notes" 2>"$tmp/notes.err"; then
	echo "FAIL: notes: not restored a second time:"
	tail -5 "$tmp/notes.err"
	exit 1
fi
kill -USR1 "$vp"
n=0
until grep -q '^check' "$tmp/out"; do
	n=$((n + 1))
	[ $n -le 500 ] || break
	sleep 0.01
done
if ! grep -q '^check ok' "$tmp/out"; then
	echo "FAIL: the restored victim: $(grep '^check' "$tmp/out" || echo 'no answer')"
	fail=1
fi
kill -KILL "$vp" 2>/dev/null
while [ -d "/proc/$vp" ]; do sleep 0.01; done

# g. the parent's pages of a tree that forked after writing them
setsid "$B/test/integration/dump-victim" mem 8 cow >"$tmp/cow.out" 2>&1 </dev/null &
ready "$tmp/cow.out" "the cow victim"
vp=$(awk '/^ready/ { print $2; exit }' "$tmp/cow.out")
child=$(awk '/^ready/ { print $4; exit }' "$tmp/cow.out")
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/cow" --network-lock skip 2>"$tmp/cow.err" ||
	{ cat "$tmp/cow.err"; echo "FAIL: dump of the cow tree"; exit 1; }
rm -rf "$tmp/good"
mv "$tmp/cow" "$tmp/good"
pages=pages-$(pages_of "$tmp/good/pagemap-$vp.img").img
copy flipcow
# 4096 + 5 pages + 7: inside the 8 MiB the child got by fork
flip "$tmp/flipcow/$pages" 24583
refused flipcow "$pages: offset [0-9]*: page run checksum mismatch"
if [ -d "/proc/$child" ]; then
	echo "FAIL: flipcow: the child $child is left behind"
	kill -KILL "$child"
	fail=1
fi
[ $fail = 0 ] && echo "image-check: ok"
exit $fail
