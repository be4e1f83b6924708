#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dedup and --auto-dedup (Documentation/memory.md, section 3, "Dedup"), on a
# chain taken under a writing workload (the victim of predump-chain.sh):
#   i1 pre-dump; i2 pre-dump, then `dedup -D i2`: i1 takes less disk;
#   i3 dump -R --track-mem --auto-dedup (a full, restorable dump): i2 shrinks;
#   i4 dump --auto-dedup: i3 shrinks.
# Each parent still passes check-images (its inventory lists the rewritten
# pagemaps), a restore of i3 alone is refused naming it, and the restore of
# i4 gives back the victim's memory byte for byte.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
[ "$(id -u)" = 0 ] || { echo "dedup: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "dedup: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
C=$CRIU_LIKE

tmp=$(mktemp -d /var/tmp/dedup.XXXXXX)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

. "$(dirname "$0")/victim-steps.inc"

# bytes of disk a directory's pages images take
used() {
	du -c --block-size=1 "$1"/pages-*.img | awk 'END { print $1 }'
}

# $1 shrank: its disk usage before ($2) is more than now
shrank() {
	now=$(used "$tmp/$1")
	echo "$1: $2 -> $now bytes of pages on disk ($3)"
	[ "$now" -lt "$2" ] || { echo "FAIL: $3 did not shrink $1"; fail=1; }
	"$C" check-images "$tmp/$1" >"$tmp/check-$1.log" 2>&1 ||
		{ echo "FAIL: check-images $1 after $3"; tail -3 "$tmp/check-$1.log"; fail=1; }
}

setsid "$V" 16 "$tmp/mem" >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_line ready

"$C" pre-dump -t $vp -D "$tmp/i1" -o "$tmp/pd1.log" ||
	{ echo "FAIL: pre-dump 1"; tail -5 "$tmp/pd1.log"; exit 1; }
sleep 0.3
"$C" pre-dump -t $vp -D "$tmp/i2" --prev-images-dir ../i1 -o "$tmp/pd2.log" ||
	{ echo "FAIL: pre-dump 2"; tail -5 "$tmp/pd2.log"; exit 1; }
u1=$(used "$tmp/i1")
"$C" dedup -D "$tmp/i2" -v4 -o "$tmp/dedup2.log" ||
	{ echo "FAIL: dedup -D i2"; tail -5 "$tmp/dedup2.log"; exit 1; }
shrank i1 "$u1" "dedup -D i2"
sleep 0.3
u2=$(used "$tmp/i2")
"$C" dump -R --track-mem -t $vp -D "$tmp/i3" --prev-images-dir ../i2 --auto-dedup -v4 \
	-o "$tmp/d3.log" || { echo "FAIL: dump -R --auto-dedup"; tail -5 "$tmp/d3.log"; exit 1; }
shrank i2 "$u2" "dump -R --auto-dedup"
sleep 0.3
kill -USR2 $vp
wait_line quiet
u3=$(used "$tmp/i3")
"$C" dump -t $vp -D "$tmp/i4" --prev-images-dir ../i3 --auto-dedup -v4 -o "$tmp/d4.log" ||
	{ echo "FAIL: dump --auto-dedup"; tail -5 "$tmp/d4.log"; exit 1; }
vp=
shrank i3 "$u3" "dump --auto-dedup"
"$C" decode "$tmp/i3/pagemap-"*.img | grep -q '"flags": 8' ||
	{ echo "FAIL: i3's pagemap has no PE_DEDUPED entry"; fail=1; }
# again: nothing left to punch, nothing broken
u3=$(used "$tmp/i3")
"$C" dedup -D "$tmp/i4" -o "$tmp/dedup4.log" ||
	{ echo "FAIL: dedup -D i4 after --auto-dedup"; tail -5 "$tmp/dedup4.log"; fail=1; }
[ "$(used "$tmp/i3")" = "$u3" ] || { echo "FAIL: a second dedup changed i3"; fail=1; }

# i3 alone: a complete dump, but pages it needs are gone
if "$C" restore -D "$tmp/i3" -d --pidfile "$tmp/pid3" -o "$tmp/r3.log" 2>/dev/null; then
	echo "FAIL: the restore of the deduplicated i3 succeeded"
	kill -KILL "$(cat "$tmp/pid3")"
	fail=1
fi
grep -q "$tmp/i3 was deduplicated" "$tmp/r3.log" ||
	{ echo "FAIL: the refusal does not name i3:"; tail -3 "$tmp/r3.log"; fail=1; }

"$C" restore -D "$tmp/i4" -d --pidfile "$tmp/pid" -o "$tmp/r.log" ||
	{ echo "FAIL: restore of the deduplicated chain"; tail -5 "$tmp/r.log"; exit 1; }
vp=$(cat "$tmp/pid")
restored_memory_same
[ $fail = 0 ] && echo "dedup: ok"
exit $fail
