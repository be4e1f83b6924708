#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A pre-dump that fails after it armed the write tracking (Documentation/
# memory.md, section 3): fault injection fails it at the open of its pages
# image, once the tree runs again and the uffds (its own and those taken
# from the previous round's keeper) are in its hands. Then, seen from
# outside with PAGEMAP_SCAN, no VMA of the victim is registered any more,
# no keeper is left, and a dump --prev-images-dir on the last good round
# saves every page (no PE_PARENT) and restores the memory page by page. The
# keeper of a good round is named in ps ("criu-like-track: write tracking
# for DIR").
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
S=$B/test/integration/wp-scan
[ "$(id -u)" = 0 ] || { echo "predump-fail: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$S" ] && [ -x "$CRIU_LIKE" ] || { echo "predump-fail: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

. "$(dirname "$0")/victim-steps.inc"

keepers() { pgrep -f "^criu-like-track: write tracking for $tmp/" | wc -l; }

setsid "$V" 16 "$tmp/mem" >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_line ready

mkdir "$tmp/p1" "$tmp/p2" "$tmp/p3" "$tmp/d4"
"$C" pre-dump -t $vp -D "$tmp/p1" -o pd.log || { echo "FAIL: pre-dump 1"; exit 1; }
[ "$("$S" $vp)" -gt 0 ] || { echo "FAIL: no VMA write-protected after a pre-dump"; fail=1; }
pgrep -f "^criu-like-track: write tracking for $tmp/p1 " >/dev/null ||
	{ echo "FAIL: no keeper named after $tmp/p1 in ps"; ps -eo pid,args | grep "[c]riu-like-track"; fail=1; }

# The same round, counting its fault points: the number of the pages image's open.
# Each round after a pause: the victim has moved its region (every 50 rounds of
# 2 ms), so each arms that new VMA (the same parasite commands, the same points).
sleep 0.3
CRIU_LIKE_FAULT=list "$C" pre-dump -t $vp -D "$tmp/p2" --prev-images-dir ../p1 -v4 -o pd.log \
	2>/dev/null || { echo "FAIL: pre-dump 2"; exit 1; }
pt=$(sed -n 's/.*fault injection: point \([0-9]*\): pages-[0-9]*\.img: open.*/\1/p' \
	"$tmp/p2/pd.log" | head -n 1)
[ -n "$pt" ] || { echo "FAIL: no fault point at the pages image's open"; exit 1; }
[ "$(keepers)" = 1 ] || { echo "FAIL: $(keepers) keepers after two rounds, 1 expected"; fail=1; }

sleep 0.3
if CRIU_LIKE_FAULT=$pt "$C" pre-dump -t $vp -D "$tmp/p3" --prev-images-dir ../p2 -v4 \
	-o pd.log 2>/dev/null; then
	echo "FAIL: the pre-dump with point $pt failing succeeded"
	exit 1
fi
grep -q "write tracking of [0-9]* tasks taken over from ../p2" "$tmp/p3/pd.log" ||
	{ echo "FAIL: the failed round did not take the tracking over first"; fail=1; }
grep -q "failing point $pt (pages-[0-9]*\.img: open)" "$tmp/p3/pd.log" ||
	{ echo "FAIL: point $pt was not the pages image's open in the failed round"; fail=1; }
grep -Eq "track: pid [0-9]+: [0-9]+ VMAs registered" "$tmp/p3/pd.log" ||
	{ echo "FAIL: the failed round armed nothing before failing"; fail=1; }
left=$("$S" $vp)
[ "$left" = 0 ] || { echo "FAIL: $left bytes still write-protected after a failed pre-dump"; fail=1; }
[ "$(keepers)" = 0 ] || { echo "FAIL: $(keepers) keepers left after a failed pre-dump"; fail=1; }
st=$(awk '/^TracerPid:/ { print $2 }' /proc/$vp/status)
[ "$st" = 0 ] || { echo "FAIL: the victim is traced after a failed pre-dump"; fail=1; }

kill -USR2 $vp
wait_line quiet
"$C" dump -t $vp -D "$tmp/d4" --prev-images-dir ../p2 -v4 -o d.log ||
	{ echo "FAIL: dump --prev-images-dir after the failure"; tail -5 "$tmp/d4/d.log"; exit 1; }
vp=
grep -q "no write tracking kept for ../p2" "$tmp/d4/d.log" ||
	{ echo "FAIL: the dump did not say the tracking was lost"; fail=1; }
if "$C" decode "$tmp/d4/pagemap-"*.img | grep -q '"flags": 2'; then
	echo "FAIL: the dump after a failed round points into its parent (PE_PARENT)"
	fail=1
fi
"$C" restore -D "$tmp/d4" -d --pidfile "$tmp/pid" -o r.log ||
	{ echo "FAIL: restore"; tail -5 "$tmp/d4/r.log"; exit 1; }
vp=$(cat "$tmp/pid")
kill -USR1 $vp
wait_line saved
cmp -s "$tmp/mem.A" "$tmp/mem.B" || { echo "FAIL: the restored memory differs"; fail=1; }
[ $fail = 0 ] && echo "predump-fail: ok (fault point $pt)"
exit $fail
