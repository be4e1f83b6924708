#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A task that dies during its restore, by a signal: the restore fails and
# names how it died (its zombie's exit code: "killed by signal 9 (Killed)"),
# kills what it started and leaves the images as they were; a plain restore
# of them then runs. The task is held in its restorer by
# CRIU_LIKE_TEST_CREDS_PAUSE_MS (a sleep right after its creds) and SIGKILLed
# there: every other signal is blocked in a restoring task, and a crash in
# the restore's own code ends it the same way, by a signal (session 18: a
# SIGSEGV that only the kernel's log named).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "restore-died: needs root"; exit 77; }
command -v sha256sum >/dev/null || { echo "restore-died: sha256sum is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "restore-died: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	[ -s "$tmp/restore.out" ] && tail -5 "$tmp/restore.out"
	exit 1
}

setsid sleep 1000 </dev/null >/dev/null 2>&1 &
pid=$!
sleep 0.2
"$CRIU_LIKE" dump -t $pid -D "$tmp/img" >"$tmp/dump.out" 2>&1 || fail "dump: $(cat "$tmp/dump.out")"
i=0
while [ -e /proc/$pid ]; do
	i=$((i + 1)); [ $i -gt 300 ] && fail "the dumped sleep is still there"; sleep 0.01
done
sums() { (cd "$tmp/img" && find . -maxdepth 1 -type f ! -name stats-restore | sort | xargs sha256sum); }
sums >"$tmp/sums"

CRIU_LIKE_TEST_CREDS_PAUSE_MS=10000 "$CRIU_LIKE" restore -D "$tmp/img" -d \
	>"$tmp/restore.out" 2>&1 &
rp=$!
# the restored task, pid $pid again, asleep in its restorer's pause (nanosleep)
i=0
until [ "$(cut -d' ' -f1 /proc/$pid/syscall 2>/dev/null)" = 35 ]; do
	i=$((i + 1)); [ $i -gt 500 ] && fail "the restore did not reach its pause"; sleep 0.01
done
kill -KILL $pid
wait $rp && fail "the restore went through after its task died"
grep -q "task $pid died during the restore: killed by signal 9 (Killed)" \
	"$tmp/restore.out" || fail "the restore does not say how task $pid died"
i=0
while [ -e /proc/$pid ]; do
	i=$((i + 1)); [ $i -gt 300 ] && fail "task $pid is left behind"; sleep 0.01
done
sums | cmp -s "$tmp/sums" - || fail "the images changed"
"$CRIU_LIKE" restore -D "$tmp/img" -d >"$tmp/restore.out" 2>&1 || fail "the plain restore failed"
[ "$(cat /proc/$pid/comm 2>/dev/null)" = sleep ] || fail "the plain restore did not bring sleep back"
echo "restore-died: the task SIGKILLed in its restorer named so, nothing left, the images kept, restored again"
