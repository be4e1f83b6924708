#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A victim with 8 threads (checksums, vector registers, a thread in read(),
# an itimer, handlers) receiving a queued realtime signal every millisecond
# is seized, infected, queried, cured and released INFECT_CYCLES times
# (default 1000). infect-test fails on any mismatch with /proc, any change
# of registers, xstate, sigmask, /proc/PID/maps or the vDSO page. At the
# end the victim must have no checksum or register error and must have
# received exactly the signals the sender queued.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/infect-victim
CYCLES=${INFECT_CYCLES:-1000}
[ "$(id -u)" = 0 ] || { echo "infect-cycles: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "infect-cycles: build first"; exit 1; }

. "$(dirname "$0")/victim.inc"

start_victim

"$CRIU_LIKE" infect-test -t "$vp" --cycles "$CYCLES" -o "$tmp/log" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
kill -TERM "$sp"
wait "$sp"
sp=
sleep 0.3 # the last queued signals get delivered
kill -USR1 "$vp"
wait "$vp"
vrc=$?
vp=

final=$(grep '^final' "$tmp/victim")
sent=$(sed -n 's/^sent //p' "$tmp/sender")
echo "victim: $final; sender: sent $sent"
set -- $final
errors=${5-none}
received=${7-none}
fail=0
[ "$rc" = 0 ] || { echo "FAIL: infect-test exited $rc"; tail -20 "$tmp/out" "$tmp/log" 2>/dev/null; fail=1; }
[ "$vrc" = 0 ] || { echo "FAIL: victim exited $vrc"; fail=1; }
[ "$errors" = 0 ] || { echo "FAIL: victim saw $errors checksum/register errors"; fail=1; }
[ "$received" = "$sent" ] || { echo "FAIL: $sent signals sent, $received received"; fail=1; }
grep -q "^infect-test: $CYCLES cycles" "$tmp/out" || { echo "FAIL: not $CYCLES cycles"; fail=1; }
[ $fail = 0 ] && echo "infect-cycles: $CYCLES cycles, victim intact, $received/$sent signals"
exit $fail
