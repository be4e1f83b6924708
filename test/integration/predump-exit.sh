#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A pre-dump copies the pages while the tree runs: a task may exit, or exec,
# between the freeze and the copy of its memory. Children of the victim do
# so the moment they run again after the freeze (they watch their smaps for
# the write tracking the parasite registered), one of them 50 ms later; the
# parent has 256 MiB to protect and copy first. The pre-dump must succeed and say which tasks
# went, the final dump --prev-images-dir must restore the parent's memory
# page by page and the exec'ed child as what it became.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/predump-victim
[ "$(id -u)" = 0 ] || { echo "predump-exit: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "predump-exit: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	pkill -KILL -f "predump-victim sleep $tmp/mem" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

. "$(dirname "$0")/victim-steps.inc"

setsid "$V" 256 "$tmp/mem" kids >"$tmp/out" 2>&1 </dev/null &
vp=$!
wait_line ready
kids=$(pgrep -P $vp | sort -n)
set -- $kids
[ $# = 3 ] || { echo "FAIL: the victim has $# children, not 3"; exit 1; }
quitter=$1 execer=$2 late=$3
sleep 0.2 # their 32 MiB written

"$C" pre-dump -t $vp -D "$tmp/i1" -v4 -o "$tmp/pd.log" ||
	{ echo "FAIL: the pre-dump failed"; grep Error "$tmp/pd.log" | head -5; exit 1; }
went="its address space ended|gone since the freeze"
for k in $quitter $late; do
	grep -Eq "pid $k: ($went)" "$tmp/pd.log" ||
		{ echo "FAIL: the pre-dump does not say that $k went"; fail=1; }
done
if grep -q "Error" "$tmp/pd.log"; then
	echo "FAIL: the pre-dump logged errors:"
	grep "Error" "$tmp/pd.log" | head -5
	fail=1
fi
n=0
until tr "\0" " " </proc/$execer/cmdline 2>/dev/null | grep -q "predump-victim sleep"; do
	n=$((n + 1))
	[ $n -le 500 ] || { echo "FAIL: child $execer did not exec"; exit 1; }
	sleep 0.01
done
for k in $quitter $late; do
	[ -d /proc/$k ] && ! grep -q '^State:.*Z' /proc/$k/status 2>/dev/null &&
		{ echo "FAIL: child $k did not exit"; fail=1; }
done

kill -USR2 $vp
wait_line quiet
"$C" dump -t $vp -D "$tmp/i2" --prev-images-dir ../i1 -v4 -o "$tmp/d.log" ||
	{ echo "FAIL: dump --prev-images-dir"; grep Error "$tmp/d.log" | head -5; exit 1; }
vp=
# the tracking of the parent went on: only what it wrote since is saved again
if grep -q "every page is saved" "$tmp/d.log"; then
	echo "FAIL: the dump lost the write tracking:"
	grep "every page is saved" "$tmp/d.log"
	fail=1
fi
size=$(stat -c %s "$tmp"/i2/pages-*.img | awk '{ s += $1 } END { print s }')
[ "$size" -lt $((128 << 20)) ] ||
	{ echo "FAIL: the dump wrote $size bytes of pages for 256 MiB"; fail=1; }
"$C" restore -D "$tmp/i2" -d --pidfile "$tmp/pid" -o "$tmp/r.log" ||
	{ echo "FAIL: restore of the chain"; grep Error "$tmp/r.log" | head -5; exit 1; }
vp=$(cat "$tmp/pid")
tr "\0" " " </proc/$execer/cmdline 2>/dev/null | grep -q "predump-victim sleep" ||
	{ echo "FAIL: the exec'ed child $execer is not restored"; fail=1; }
restored_memory_same
how=$(grep -Eo "pid ($quitter|$late): ($went)" "$tmp/pd.log" | paste -sd,)
[ $fail = 0 ] && echo "predump-exit: ok ($how; $size bytes in the dump)"
exit $fail
