#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The dumper SIGKILLed at random points, INFECT_TRIALS times (default 50, as
# make test runs it: 1.5 minutes on a PVM guest; 100 or more for a longer run):
# odd trials at a random step of the injection/parasite/cure machinery
# (CRIU_LIKE_FAULT_STEP, see fault_kill_point()), even trials after a
# random delay (mostly during the seize). After each trial the victim must
# be untraced, not stopped, every thread with its original sigmask, still
# making progress, without checksum or register errors; at the end it must
# have received every signal the sender queued.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/infect-victim
TRIALS=${INFECT_TRIALS:-50}
[ "$(id -u)" = 0 ] || { echo "infect-kill: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "infect-kill: build first"; exit 1; }

. "$(dirname "$0")/victim.inc"

masks() {
	for t in /proc/$vp/task/*; do
		echo "$(basename "$t") $(sed -n 's/^SigBlk:\t//p' "$t/status")"
	done
}

progress() {
	tail -n 1 "$tmp/victim" | awk '$1 == "progress" { print $2, $4 }'
}

start_victim
masks >"$tmp/masks0"

ok=0
trial=1
while [ $trial -le "$TRIALS" ]; do
	r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	if [ $((trial % 2)) = 1 ]; then
		# 150 to 200 steps make one cycle with the 8-thread victim: cover it all.
		CRIU_LIKE_FAULT_STEP=$((r % 200 + 1)) "$CRIU_LIKE" infect-test -t "$vp" \
			--cycles 1000000 >/dev/null 2>&1 &
		dp=$!
		how="step $((r % 200 + 1))"
	else
		"$CRIU_LIKE" infect-test -t "$vp" --cycles 1000000 >/dev/null 2>&1 &
		dp=$!
		d=$((r % 250))
		sleep "$(printf '0.%03d' "$d")"
		kill -KILL "$dp" 2>/dev/null
		how="after ${d} ms"
	fi
	{ wait "$dp"; } 2>/dev/null
	sleep 0.05
	# D for a moment is normal on a loaded machine (mmap_lock, a fault): look again
	for i in 1 2 3 4 5 6 7 8 9 10; do
		state=$(sed -n 's/^State:\t\(.\).*/\1/p' /proc/$vp/status 2>/dev/null)
		[ "$state" = D ] || break
		sleep 0.05
	done
	tracer=$(cat /proc/$vp/task/*/status 2>/dev/null | sed -n 's/^TracerPid:\t//p' | sort -u)
	# A thread inside a handler blocks that signal for a moment: look a few times.
	for i in 1 2 3 4 5 6 7 8; do
		masks >"$tmp/masks"
		cmp -s "$tmp/masks0" "$tmp/masks" && break
		sleep 0.01
	done
	p1=$(progress)
	sleep 0.05
	p2=$(progress)
	bad=
	[ -n "$state" ] || bad="victim is gone"
	[ -z "$bad" ] && { [ "$state" = S ] || [ "$state" = R ]; } || bad="${bad:-state $state}"
	[ -z "$bad" ] && [ "$tracer" != 0 ] && bad="still traced by $tracer"
	[ -z "$bad" ] && ! cmp -s "$tmp/masks0" "$tmp/masks" && bad="sigmasks changed: $(cat "$tmp/masks")"
	[ -z "$bad" ] && [ "${p1%% *}" = "${p2%% *}" ] && bad="no progress ($p1)"
	[ -z "$bad" ] && [ "${p2#* }" != 0 ] && bad="victim errors: ${p2#* }"
	if [ -n "$bad" ]; then
		echo "trial $trial ($how): $bad"
		break
	fi
	ok=$((ok + 1))
	trial=$((trial + 1))
done

# A dumper may have died with the trampoline in the vDSO header: the next
# infection puts the kernel's bytes (zeros) back.
extra=0
"$CRIU_LIKE" infect-test -t "$vp" -v3 >"$tmp/last" 2>&1 || { echo "FAIL: infect-test after the trials"; extra=1; }
sed -n 's/.*infect: //p' "$tmp/last" | grep 'killed dumpers'
vdso=$(sed -n 's/^\([0-9a-f]*\)-.*\[vdso\]$/\1/p' /proc/$vp/maps)
ident=$(dd if=/proc/$vp/mem bs=1 skip=$((0x$vdso + 7)) count=9 2>/dev/null | od -An -tx1 | tr -d ' \n')
[ "$ident" = 000000000000000000 ] || { echo "FAIL: vDSO e_ident[7..15] is $ident"; extra=1; }
# ... and unmaps the areas killed dumpers left. The last dumper killed may
# have left the victim inside an injected mmap(), which it finishes once it
# runs again (a busy machine may delay that past the infection above): the
# next infection removes that one too.
leaked=$(grep -c 'rwxs .* /dev/zero (deleted)' /proc/$vp/maps)
for i in 1 2 3; do
	[ "$leaked" != 0 ] || break
	sleep 0.2
	"$CRIU_LIKE" infect-test -t "$vp" -v3 >"$tmp/last2" 2>&1 || { echo "FAIL: infect-test again"; extra=1; }
	sed -n 's/.*infect: //p' "$tmp/last2" | grep 'killed dumpers'
	leaked=$(grep -c 'rwxs .* /dev/zero (deleted)' /proc/$vp/maps)
done
if [ "$leaked" != 0 ]; then
	echo "FAIL: $leaked parasite areas still mapped"
	grep 'rwxs .* /dev/zero (deleted)' /proc/$vp/maps
	# where each thread is (nr args sp pc, or running): one inside keeps its area
	for t in /proc/$vp/task/*; do echo "thread $(basename "$t"): $(cat "$t/syscall")"; done
	sed -n 's/.*infect: //p' "$tmp/last2"
	extra=1
fi

kill -TERM "$sp"
wait "$sp"
sp=
sleep 0.3
kill -USR1 "$vp" 2>/dev/null
wait "$vp"
vp=
final=$(grep '^final' "$tmp/victim")
sent=$(sed -n 's/^sent //p' "$tmp/sender")
set -- $final
echo "$ok/$TRIALS trials: victim intact ($final; sent $sent)"
[ "$ok" = "$TRIALS" ] && [ $extra = 0 ] && [ "${5:-x}" = 0 ] && [ "${7:-x}" = "$sent" ] && exit 0
[ "${7:-x}" = "$sent" ] || echo "FAIL: $sent signals sent, ${7:-?} received"
exit 1
