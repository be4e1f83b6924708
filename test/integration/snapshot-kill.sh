#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dump --snapshot (Documentation/memory.md, "Live snapshot"): the options it
# refuses, by name; then a snapshot of a victim that writes 512 MiB at random
# without a pause, its criu-like stopped (SIGSTOP) in the middle of the copy:
# the victim must wait (a write to a page not saved yet waits for the fault
# handler), and once criu-like is killed (SIGKILL: its uffds close) it must
# run again, untraced, with no image marked complete. Then a whole snapshot
# of the same victim completes and its directory restores. Last, two victims
# that change their memory map during the copy: one forks children that write
# the area (their VMAs are not protected: they must never wait), one unmaps and
# maps again a written area in a loop (the snapshot either completes or fails
# naming the change; the victim runs on either way, and a failed directory
# is not marked complete). Then fault injection (CRIU_LIKE_FAULT=N, every
# 7th point of a snapshot, the copy's reads and writes and the fault
# handler's included): each failed snapshot leaves the victim running,
# untraced, its directory not marked complete, and never hangs.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/snapshot-victim
[ "$(id -u)" = 0 ] || { echo "snapshot-kill: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "snapshot-kill: build first"; exit 1; }
C=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cp=
cleanup() {
	[ -n "$cp" ] && kill -KILL "$cp" 2>/dev/null
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0

# how many writes the victim made (8 bytes at the start of its shared file)
count() { od -An -tu8 -N8 "$tmp/count" | tr -d ' '; }

runs() {
	a=$(count)
	sleep 0.3
	[ "$(count)" != "$a" ]
}

setsid "$V" 512 "$tmp/count" >"$tmp/out" 2>&1 </dev/null &
vp=$!
n=0
until grep -q ready "$tmp/out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || { echo "FAIL: the victim never got ready"; exit 1; }
	sleep 0.01
done
runs || { echo "FAIL: the victim does not run"; exit 1; }

# Refused by name, the victim untouched.
mkdir "$tmp/r"
"$C" dump -t $vp -D "$tmp/r" --snapshot 2>"$tmp/r.err" &&
	{ echo "FAIL: --snapshot without -R accepted"; fail=1; }
grep -q -- "--snapshot needs --leave-running" "$tmp/r.err" ||
	{ echo "FAIL: no reason for --snapshot without -R:"; cat "$tmp/r.err"; fail=1; }
"$C" dump -t $vp -D "$tmp/r" -R --snapshot --page-server --address 127.0.0.1 --port 1 \
	2>"$tmp/r.err" && { echo "FAIL: --snapshot --page-server accepted"; fail=1; }
grep -q -- "--snapshot with --page-server" "$tmp/r.err" ||
	{ echo "FAIL: no reason for --snapshot --page-server:"; cat "$tmp/r.err"; fail=1; }
"$C" pre-dump -t $vp -D "$tmp/r" --snapshot 2>"$tmp/r.err" &&
	{ echo "FAIL: pre-dump --snapshot accepted"; fail=1; }
grep -q -- "--snapshot is an option of dump -R" "$tmp/r.err" ||
	{ echo "FAIL: no reason for pre-dump --snapshot:"; cat "$tmp/r.err"; fail=1; }
runs || { echo "FAIL: the victim stopped after the refusals"; fail=1; }

# Stopped in the middle of the copy, then killed.
mkdir "$tmp/k"
"$C" dump -t $vp -D "$tmp/k" -R --snapshot -v4 -o d.log &
cp=$!
n=0
until grep -q "the tree runs again" "$tmp/k/d.log" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 3000 ] || { echo "FAIL: the snapshot never let the tree run"; exit 1; }
	sleep 0.01
done
kill -STOP $cp
if grep -q "dump of $vp complete" "$tmp/k/d.log"; then
	echo "SKIP-ish: the copy ended before criu-like was stopped; nothing to kill"
	kill -KILL $cp
	fail=1
else
	sleep 0.2
	if runs; then
		echo "FAIL: the victim writes on while the snapshot's handler is stopped"
		fail=1
	fi
	kill -KILL $cp
	wait $cp 2>/dev/null
	cp=
	runs || { echo "FAIL: the victim does not run after criu-like was killed mid-copy"; fail=1; }
	st=$(awk '/^TracerPid:/ { print $2 }' /proc/$vp/status)
	[ "$st" = 0 ] || { echo "FAIL: the victim is traced after a killed snapshot"; fail=1; }
	if "$C" decode "$tmp/k/inventory.img" 2>/dev/null | grep -q '"completed": true'; then
		echo "FAIL: a killed snapshot left its directory marked complete"
		fail=1
	fi
	if "$C" restore -D "$tmp/k" -d -o r.log 2>/dev/null; then
		echo "FAIL: the directory of a killed snapshot restored"
		fail=1
	fi
fi

# A whole snapshot, the victim writing; then it is killed and restored.
mkdir "$tmp/s"
"$C" dump -t $vp -D "$tmp/s" -R --snapshot -v4 -o d.log 2>"$tmp/s.err" ||
	{ echo "FAIL: snapshot"; tail -5 "$tmp/s/d.log"; exit 1; }
grep -q "snapshot of $vp: frozen [0-9]* us" "$tmp/s.err" ||
	{ echo "FAIL: no frozen time printed:"; cat "$tmp/s.err"; fail=1; }
runs || { echo "FAIL: the victim does not run after a snapshot"; fail=1; }
kill -KILL $vp
while [ -e /proc/$vp ] && ! grep -q '^State:.*Z' /proc/$vp/status 2>/dev/null; do sleep 0.01; done
wait $vp 2>/dev/null
"$C" restore -D "$tmp/s" -d -o r.log --pidfile "$tmp/rp" ||
	{ echo "FAIL: restore of the snapshot"; tail -5 "$tmp/s/r.log"; exit 1; }
vp=$(cat "$tmp/rp")
runs || { echo "FAIL: the restored victim does not run"; fail=1; }
kill -KILL $vp
vp=

for mode in fork munmap; do
	rm -f "$tmp/count"
	: >"$tmp/out"
	setsid "$V" 256 "$tmp/count" $mode >"$tmp/out" 2>&1 </dev/null &
	vp=$!
	n=0
	until grep -q ready "$tmp/out" 2>/dev/null; do
		n=$((n + 1))
		[ $n -le 1000 ] || { echo "FAIL: the $mode victim never got ready"; exit 1; }
		sleep 0.01
	done
	# A child alive at the freeze that exits during the copy is held at its exit until its
	# pages are copied (memory.md, "Live snapshot"): the fork victim's snapshot succeeds.
	rm -rf "$tmp/$mode"
	mkdir "$tmp/$mode"
	"$C" dump -t $vp -D "$tmp/$mode" -R --snapshot -v4 -o d.log 2>/dev/null
	rc=$?
	if [ $rc = 0 ]; then
		echo "snapshot of the $mode victim: complete"
	else
		[ $mode = fork ] && { echo "FAIL: the snapshot of the fork victim failed"; fail=1; }
		grep -q "Error" "$tmp/$mode/d.log" ||
			{ echo "FAIL: the failed snapshot of the $mode victim gives no reason"; fail=1; }
		echo "snapshot of the $mode victim: refused: $(grep -m1 Error "$tmp/$mode/d.log" | cut -c1-200)"
		if "$C" decode "$tmp/$mode/inventory.img" 2>/dev/null | grep -q '"completed": true'; then
			echo "FAIL: a failed snapshot of the $mode victim is marked complete"
			fail=1
		fi
	fi
	runs || { echo "FAIL: the $mode victim does not run after the snapshot"; fail=1; }
	kill -KILL $vp
	vp=
done

rm -f "$tmp/count"
setsid "$V" 16 "$tmp/count" >"$tmp/out" 2>&1 </dev/null &
vp=$!
n=0
until grep -q ready "$tmp/out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || { echo "FAIL: the victim never got ready"; exit 1; }
	sleep 0.01
done
mkdir "$tmp/l"
CRIU_LIKE_FAULT=list "$C" dump -t $vp -D "$tmp/l" -R --snapshot -v4 -o d.log 2>/dev/null ||
	{ echo "FAIL: snapshot counting its fault points: $(grep -m3 Error "$tmp/l/d.log")"; exit 1; }
np=$(grep -c "fault injection: point" "$tmp/l/d.log")
grep -q "fault injection: point.*snapshot write" "$tmp/l/d.log" ||
	{ echo "FAIL: no fault point in the snapshot's copy"; fail=1; }
i=1
failed=0
while [ $i -le "$np" ]; do
	rm -rf "$tmp/f"
	mkdir "$tmp/f"
	CRIU_LIKE_FAULT=$i timeout 30 "$C" dump -t $vp -D "$tmp/f" -R --snapshot -o d.log 2>/dev/null
	rc=$?
	[ $rc = 124 ] && { echo "FAIL: the snapshot hangs with point $i failing"; fail=1; }
	runs || { echo "FAIL: the victim does not run after point $i failed"; fail=1; }
	st=$(awk '/^TracerPid:/ { print $2 }' /proc/$vp/status)
	[ "$st" = 0 ] || { echo "FAIL: the victim is traced after point $i failed"; fail=1; }
	if [ $rc != 0 ]; then
		failed=$((failed + 1))
		if "$C" decode "$tmp/f/inventory.img" 2>/dev/null | grep -q '"completed": true'; then
			echo "FAIL: failed snapshot (point $i) marked complete"
			fail=1
		fi
	fi
	i=$((i + 7))
done
echo "fault injection: $failed of $(((np + 6) / 7)) snapshots failed, the victim ran on after each"
kill -KILL $vp
vp=
[ $fail = 0 ] && echo "snapshot-kill: PASS"
exit $fail
