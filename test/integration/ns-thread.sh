#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One thread of a process in a namespace of its own, of each kind a thread
# can hold apart from its process (net, ipc, uts, mnt, cgroup, and its
# pid_for_children and time_for_children: unshare() in that thread): the
# dump must refuse it naming the pid, the thread and the kind, and leave the
# process running, neither stopped nor traced. A dump reads every kind of a
# process's first thread and only these of the others (ns.h,
# NS_THREAD_KINDS): this is what keeps that shortcut honest. The thread
# apart is the third of three (the main one, an idle one, then it). A
# control run with no unshare must dump (leave-running). Twice: with the BPF
# task iterator, which tells a thread in its first thread's namespaces by
# their nsproxy (CRIU_LIKE_TASK_BPF=1, dump/thread-facts.c), and with every
# thread's links read (=0).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-thread: needs root"; exit 77; }
PY=$(command -v python3 2>/dev/null) && "$PY" -c 'pass' 2>/dev/null ||
	{ echo "ns-thread: python3 is not installed"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-thread: build first ($CRIU_LIKE)"; exit 1; }

tmp=$(mktemp -d)
vp=
trap '[ -n "$vp" ] && kill -KILL $vp 2>/dev/null; rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	[ -s "$tmp/err" ] && tail -5 "$tmp/err"
	exit 1
}

# The victim: argv[1] the unshare flags of its third thread (0: none), argv[2]
# the file it writes "ready TID" into once that thread is apart.
cat >"$tmp/victim.py" <<'PYTHON'
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
flags = int(sys.argv[1], 0)
tid = []
def idle():
    while True:
        time.sleep(1)
def apart():
    if flags and libc.unshare(flags) != 0:
        os._exit(1)
    tid.append(threading.get_native_id())
    idle()
threading.Thread(target=idle, daemon=True).start()
time.sleep(0.05)
threading.Thread(target=apart, daemon=True).start()
while not tid:
    time.sleep(0.01)
with open(sys.argv[2] + ".new", "w") as f:
    f.write("ready %d\n" % tid[0])
os.rename(sys.argv[2] + ".new", sys.argv[2])
idle()
PYTHON

start() {
	rm -f "$tmp/ready"
	setsid "$PY" "$tmp/victim.py" "$1" "$tmp/ready" </dev/null >/dev/null 2>&1 &
	vp=$!
	i=0
	until [ -s "$tmp/ready" ]; do
		i=$((i + 1))
		[ $i -gt 500 ] && fail "the victim (flags $1) never got ready"
		kill -0 $vp 2>/dev/null || fail "the victim (flags $1) died: unshare refused?"
		sleep 0.01
	done
	tt=$(awk '{ print $2 }' "$tmp/ready")
}

# untouched: the victim runs on, neither stopped nor traced.
untouched() {
	kill -0 $vp 2>/dev/null || fail "$1: pid $vp died"
	for t in /proc/$vp/task/*; do
		st=$(awk '/^State:/ { print $2 }' "$t/status")
		tr=$(awk '/^TracerPid:/ { print $2 }' "$t/status")
		case $st in T | t) fail "$1: $t is stopped ($st)" ;; esac
		[ "$tr" = 0 ] || fail "$1: $t is traced by $tr"
	done
}

stop() {
	kill -KILL $vp
	wait $vp 2>/dev/null
	vp=
}

checks=0
for how in iterator links; do
	[ $how = iterator ] && export CRIU_LIKE_TASK_BPF=1 || export CRIU_LIKE_TASK_BPF=0
	start 0
	rm -rf "$tmp/img"
	"$CRIU_LIKE" dump -t $vp -D "$tmp/img" -R -v4 -o dump.log >/dev/null 2>"$tmp/err" ||
		fail "control ($how): the dump of $vp (no thread apart) failed"
	# the iterator ran where the kernel has one, and only then
	ran=$(grep -c "task iterator: 3 threads of 1 processes" "$tmp/img/dump.log")
	case $how:$ran in
	iterator:0) "$CRIU_LIKE" check 2>/dev/null | grep -q "^bpf-task-iter *present" &&
		fail "control ($how): the task iterator did not run" ;;
	links:[1-9]*) fail "control ($how): the task iterator ran with CRIU_LIKE_TASK_BPF=0" ;;
	esac
	untouched "control ($how)"
	stop
	checks=$((checks + 1))

	for c in net:0x40000000 ipc:0x08000000 uts:0x04000000 mnt:0x00020000 cgroup:0x02000000 \
		pid_for_children:0x20000000 time_for_children:0x80; do
		kind=${c%%:*}
		[ -e /proc/self/ns/$kind ] || { echo "skip: $kind: no such namespace here"; continue; }
		start "${c#*:}"
		rm -rf "$tmp/img"
		if "$CRIU_LIKE" dump -t $vp -D "$tmp/img" -R >/dev/null 2>"$tmp/err"; then
			fail "$kind ($how): the dump of $vp with thread $tt in a $kind namespace of its own succeeded"
		fi
		grep -E "pid $vp.*thread $tt.*$kind namespace" "$tmp/err" >"$tmp/why" ||
			fail "$kind ($how): no refusal naming pid $vp, thread $tt and the $kind namespace"
		untouched "$kind ($how)"
		stop
		checks=$((checks + 1))
		echo "ok: $kind ($how): $(head -n 1 "$tmp/why" | sed 's/^[^:]*: //')"
	done
done
echo "ns-thread: $checks checks passed"
