#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# stats-dump and stats-restore as CRIU writes them (Documentation/stats.md):
# after a dump of a victim with 8 MiB of memory and its restore, both files
# exist under CRIU's names, decode, and hold consistent numbers (pages
# written >= the victim's memory, frozen time > 0 and >= the memory dump
# time, pages restored = pages written); --display-stats prints CRIU's lines
# on stdout; the dump's last line on stderr says how long the tree was frozen;
# a dump on top of a pre-dump counts the pages it left in the parent
# (pages_skipped_parent) and the pre-dump its memory time; a restored child
# that shares 8 MiB with its parent since a fork counts them kept
# (pages_skipped_cow <= pages_compared);
# a failed dump writes no stats-dump.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "stats: needs root"; exit 77; }
command -v python3 >/dev/null || { echo "stats: needs python3"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "stats: build first"; exit 1; }
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

setsid "$V" mem 8 >"$tmp/victim" 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' "$tmp/victim" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || fail "victim did not start"
	sleep 0.01
done

# field FILE PART NAME: one number of a decoded stats image
field() {
	"$CRIU_LIKE" decode "$1" | python3 -c "import json, sys
print(json.load(sys.stdin)['records'][0]['$2'].get('$3', 'missing'))"
}

"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img" --network-lock skip --display-stats \
	>"$tmp/dump.out" 2>"$tmp/dump.err" || { cat "$tmp/dump.err"; fail "dump"; }
[ -f "$tmp/img/stats-dump" ] || fail "no stats-dump after the dump: $(ls "$tmp/img")"
grep -q "^dump of $vp complete in $tmp/img: the tree was frozen [0-9.]* ms$" "$tmp/dump.err" ||
	fail "no frozen time line at the end of the dump: $(tail -n 2 "$tmp/dump.err")"
written=$(field "$tmp/img/stats-dump" dump pages_written)
scanned=$(field "$tmp/img/stats-dump" dump pages_scanned)
frozen=$(field "$tmp/img/stats-dump" dump frozen_time)
memdump=$(field "$tmp/img/stats-dump" dump memdump_time)
memwrite=$(field "$tmp/img/stats-dump" dump memwrite_time)
shwritten=$(field "$tmp/img/stats-dump" dump shpages_written)
echo "stats-dump: written $written scanned $scanned frozen $frozen us memdump $memdump us" \
	"memwrite $memwrite us shpages $shwritten"
[ "$written" -ge 2048 ] || fail "pages_written $written < 2048 (8 MiB)"
[ "$scanned" -ge "$written" ] || fail "pages_scanned $scanned < pages_written $written"
[ "$frozen" -gt 0 ] && [ "$frozen" -ge "$memdump" ] || fail "frozen_time $frozen, memdump $memdump"
[ "$memdump" -ge "$memwrite" ] || fail "memdump_time $memdump < memwrite_time $memwrite"
grep -q '^Displaying dump stats:$' "$tmp/dump.out" &&
	grep -q "^Memory pages written: $written (0x" "$tmp/dump.out" &&
	grep -q '^Frozen time: [0-9]* us$' "$tmp/dump.out" ||
	{ cat "$tmp/dump.out"; fail "--display-stats did not print the dump's stats"; }
# written after the inventory: not one of the images the restore checks
"$CRIU_LIKE" check-images "$tmp/img" >/dev/null || fail "check-images"

# the tree was killed by the dump; bring it back
"$CRIU_LIKE" restore -D "$tmp/img" -d --network-lock skip --display-stats \
	>"$tmp/restore.out" 2>"$tmp/restore.err" || { cat "$tmp/restore.err"; fail "restore"; }
[ -f "$tmp/img/stats-restore" ] || fail "no stats-restore after the restore"
restored=$(field "$tmp/img/stats-restore" restore pages_restored)
forking=$(field "$tmp/img/stats-restore" restore forking_time)
rtime=$(field "$tmp/img/stats-restore" restore restore_time)
echo "stats-restore: restored $restored forking $forking us restore $rtime us"
[ "$restored" -eq $((written + shwritten)) ] || fail "pages_restored $restored != $written + $shwritten"
[ "$forking" -gt 0 ] && [ "$rtime" -gt "$forking" ] || fail "forking_time $forking, restore_time $rtime"
grep -q '^Displaying restore stats:$' "$tmp/restore.out" &&
	grep -q "^Pages restored: $restored (0x" "$tmp/restore.out" &&
	grep -q '^Forking time: [0-9]* us$' "$tmp/restore.out" ||
	{ cat "$tmp/restore.out"; fail "--display-stats did not print the restore's stats"; }
"$CRIU_LIKE" decode "$tmp/img" | grep -q '"kind": "stats-restore"' || fail "decode DIR skips stats-restore"

[ "$(field "$tmp/img/stats-restore" restore pages_skipped_cow)" -eq 0 ] ||
	fail "pages_skipped_cow of a single task is not 0"
kill -KILL "$vp" 2>/dev/null
vp=

# start_victim MODE...: a new victim, its pid in $vp
start_victim() {
	: >"$tmp/victim"
	setsid "$V" "$@" >"$tmp/victim" 2>&1 </dev/null &
	vp=$!
	n=0
	until grep -q '^ready' "$tmp/victim" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || fail "victim $* did not start"
		sleep 0.01
	done
}

# A pre-dump, then a dump on top of it: the 8 MiB the victim only reads are
# in the parent (pages_skipped_parent), the pre-dump timed its memory.
start_victim mem 8
"$CRIU_LIKE" pre-dump -t "$vp" -D "$tmp/pre" --network-lock skip 2>"$tmp/pre.err" ||
	{ cat "$tmp/pre.err"; fail "pre-dump"; }
pmemdump=$(field "$tmp/pre/stats-dump" dump memdump_time)
pwritten=$(field "$tmp/pre/stats-dump" dump pages_written)
[ "$pmemdump" -gt 0 ] || fail "the pre-dump's memdump_time is $pmemdump"
[ "$pwritten" -ge 2048 ] || fail "the pre-dump wrote $pwritten pages < 2048"
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/inc" --prev-images-dir ../pre --network-lock skip \
	2>"$tmp/inc.err" || { cat "$tmp/inc.err"; fail "dump on the pre-dump"; }
skipped=$(field "$tmp/inc/stats-dump" dump pages_skipped_parent)
iwritten=$(field "$tmp/inc/stats-dump" dump pages_written)
shskipped=$(field "$tmp/inc/stats-dump" dump shpages_skipped_parent)
echo "pre-dump: memdump $pmemdump us written $pwritten; dump on it: skipped $skipped written" \
	"$iwritten shpages skipped $shskipped"
[ "$skipped" -ge 2048 ] || fail "pages_skipped_parent $skipped < 2048 (8 MiB unchanged)"
[ "$iwritten" -lt "$pwritten" ] || fail "the dump on the pre-dump wrote $iwritten pages"
[ "$shskipped" = 0 ] || fail "shpages_skipped_parent $shskipped (shared memory is saved whole)"
"$CRIU_LIKE" restore -D "$tmp/inc" -d --network-lock skip >/dev/null 2>"$tmp/inc-r.err" ||
	{ cat "$tmp/inc-r.err"; fail "restore of the dump on the pre-dump"; }
kill -KILL "$vp" 2>/dev/null
vp=

# A child that shares all 8 MiB with its parent since the fork: the restore
# gives them to it by fork again (pages_skipped_cow), not from the images.
start_victim mem 8 cow
child=$(sed -n 's/^ready [0-9]* child \([0-9]*\)$/\1/p' "$tmp/victim")
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/cow" --network-lock skip 2>"$tmp/cow.err" ||
	{ cat "$tmp/cow.err"; fail "dump of the cow tree"; }
"$CRIU_LIKE" restore -D "$tmp/cow" -d --network-lock skip >/dev/null 2>"$tmp/cow-r.err" ||
	{ cat "$tmp/cow-r.err"; fail "restore of the cow tree"; }
compared=$(field "$tmp/cow/stats-restore" restore pages_compared)
cow=$(field "$tmp/cow/stats-restore" restore pages_skipped_cow)
crestored=$(field "$tmp/cow/stats-restore" restore pages_restored)
echo "cow tree: compared $compared skipped_cow $cow restored $crestored"
[ "$cow" -ge 2048 ] || fail "pages_skipped_cow $cow < 2048 (8 MiB shared by fork)"
[ "$compared" -ge "$cow" ] || fail "pages_compared $compared < pages_skipped_cow $cow"
[ "$crestored" -ge "$cow" ] || fail "pages_restored $crestored < pages_skipped_cow $cow"
kill -KILL "$child" 2>/dev/null

# a failed dump writes none
"$CRIU_LIKE" dump -t 999999 -D "$tmp/bad" --network-lock skip 2>/dev/null && fail "dump of no pid"
[ ! -e "$tmp/bad/stats-dump" ] || fail "a failed dump wrote stats-dump"
echo "stats: ok"
