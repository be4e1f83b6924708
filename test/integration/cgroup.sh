#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A container in cgroups (issue 14, item 3; Documentation/cgroups.md): a
# busybox container (its own pid, mount, UTS and IPC namespaces, as
# ns-container.sh makes them) whose init is in a memory cgroup ct with a
# 64 MiB limit, a pids cgroup ct with pids.max 16 and a freezer cgroup ct,
# and whose worker is in ct/worker below the first two (32 MiB, pids.max 8).
# Dumped once; the images are
# then restored again and again, each time into a different state of the
# host's cgroups, checking what CRIU's --manage-cgroups modes promise:
#   - soft (the default), the cgroups removed: made again with their limits,
#     every task in its own; a cgroup that exists keeps its limits;
#   - none and props: the cgroups must exist (refused by name otherwise);
#     none leaves their limits alone, props writes them;
#   - full: the limits written over the existing cgroups;
#   - strict: refused while a cgroup below the root exists, else made;
#   - ignore: the tree stays in criu-like's own cgroups;
#   - --cgroup-root: the tree's cgroups made below another root;
#   - a restore that fails (its root moved into a pids cgroup that takes
#     one task) names that cgroup, removes the cgroups it made and kills
#     what it started;
#   - a frozen container dumped with --freeze-cgroup is frozen again;
#   - --cgroup-props (merge, replace, from a file, refusals) and
#     --cgroup-dump-controller.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "cgroup: needs root"; exit 77; }
command -v unshare >/dev/null || { echo "cgroup: unshare is not installed"; exit 77; }
BB=$(command -v busybox) && "$BB" --list >/dev/null 2>&1 ||
	{ echo "cgroup: busybox (busybox-static) is not installed"; exit 77; }
for c in memory pids freezer; do
	[ -w /sys/fs/cgroup/$c/cgroup.procs ] || { echo "cgroup: no v1 $c hierarchy at /sys/fs/cgroup/$c"; exit 77; }
done
[ -x "$CRIU_LIKE" ] || { echo "cgroup: build first ($CRIU_LIKE)"; exit 1; }

own() { awk -F: -v c="$1" '$2 == c { print $3 }' /proc/self/cgroup | sed 's,^/$,,'; }
MEM=/sys/fs/cgroup/memory$(own memory)/itest-cg.$$
PIDS=/sys/fs/cgroup/pids$(own pids)/itest-cg.$$
FRZ=/sys/fs/cgroup/freezer$(own freezer)/itest-cg.$$
tmp=$(mktemp -d)
pid=

rm_cgroups() { # every cgroup below $MEM and $PIDS except the ones named
	for top in "$MEM" "$PIDS" "$FRZ"; do
		[ -d "$top" ] || continue
		find "$top" -mindepth 1 -depth -type d | while read -r d; do
			keep=
			for k in "$@"; do [ "$d" = "$top/$k" ] && keep=1; done
			[ -n "$keep" ] || rmdir "$d" 2>/dev/null
		done
	done
}
cleanup() {
	[ -n "$pid" ] && kill -KILL $pid 2>/dev/null
	sleep 0.1
	rm_cgroups
	[ -f "$FRZ/ct/freezer.state" ] && echo THAWED >"$FRZ/ct/freezer.state"
	[ -n "$pid" ] && kill -KILL $pid 2>/dev/null && sleep 0.1
	rm_cgroups
	rmdir "$MEM" "$PIDS" "$FRZ" 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	for f in "$tmp"/*.err "$tmp"/img/restore.log; do
		[ -s "$f" ] && { echo "---- $f"; tail -8 "$f"; }
	done
	exit 1
}

R=$tmp/root
mkdir -p "$R/bin" "$R/proc" "$R/dev" "$R/old" "$MEM/ct/worker" "$PIDS/ct/worker" "$FRZ/ct"
cp "$BB" "$R/bin/busybox"
for a in $("$BB" --list); do
	[ "$a" = busybox ] || ln -s busybox "$R/bin/$a"
done
set_limits() { # the limits of the dump
	echo 67108864 >"$MEM/ct/memory.limit_in_bytes" && echo 33554432 >"$MEM/ct/worker/memory.limit_in_bytes" &&
		{ [ ! -f "$MEM/ct/memory.memsw.limit_in_bytes" ] || echo 100663296 >"$MEM/ct/memory.memsw.limit_in_bytes"; } &&
		echo 16 >"$PIDS/ct/pids.max" && echo 8 >"$PIDS/ct/worker/pids.max"
}
set_limits || fail "cannot set the limits"

cat >"$R/worker.sh" <<'EOF2'
while :; do sleep 0.1; done
EOF2
cat >"$R/loop.sh" <<'EOF2'
/bin/sh /worker.sh &
while :; do sleep 0.05; done
EOF2
cat >"$tmp/enter.sh" <<'EOF2'
set -e
mount --make-rprivate /
mount --bind "$1" "$1"
cd "$1"
mount -t devtmpfs dev dev
pivot_root . old
umount -l /old
mount -t proc proc /proc
exec /bin/setsid /bin/sh /loop.sh </dev/null >/dev/null 2>&1
EOF2
# the container is born in ct (memory and pids)
setsid sh -c "echo \$\$ >'$MEM/ct/cgroup.procs' && echo \$\$ >'$PIDS/ct/cgroup.procs' &&
	echo \$\$ >'$FRZ/ct/cgroup.procs' &&
	exec unshare --fork --pid --mount --uts --ipc sh '$tmp/enter.sh' '$R'" \
	</dev/null >"$tmp/enter.err" 2>&1 &
ush=$!
worker_of() { pgrep -P "$1" -f worker.sh; }
i=0
while :; do
	pid=$(pgrep -P $ush)
	[ -n "$pid" ] && [ -n "$(worker_of $pid)" ] && break
	i=$((i + 1)); [ $i -gt 250 ] && fail "the container does not start"; sleep 0.02
done
w=$(worker_of $pid)
echo $w >"$MEM/ct/worker/cgroup.procs" && echo $w >"$PIDS/ct/worker/cgroup.procs" ||
	fail "cannot move the worker into ct/worker"

cg_of() { awk -F: -v c="$2" '$2 == c { print $3 }' /proc/$1/cgroup; }
rel() { echo "/sys/fs/cgroup/$1$(cg_of $2 $1)"; }
# in WHERE: every task where it must be (ct, ct/worker below ROOT_MEM/ROOT_PIDS)
members() {
	w=$(worker_of $pid)
	[ -n "$w" ] || fail "$1: no worker"
	[ "$(rel memory $pid)" = "$2/ct" ] || fail "$1: init in memory $(rel memory $pid), not $2/ct"
	[ "$(rel pids $pid)" = "$3/ct" ] || fail "$1: init in pids $(rel pids $pid), not $3/ct"
	[ "$(rel memory $w)" = "$2/ct/worker" ] || fail "$1: worker in memory $(rel memory $w)"
	[ "$(rel pids $w)" = "$3/ct/worker" ] || fail "$1: worker in pids $(rel pids $w)"
}
limits() { # WHAT ROOT_MEM ROOT_PIDS CT_MEM_LIMIT
	[ "$(cat "$2/ct/memory.limit_in_bytes")" = "$4" ] || fail "$1: ct memory limit $(cat "$2/ct/memory.limit_in_bytes"), not $4"
	[ "$(cat "$2/ct/worker/memory.limit_in_bytes")" = 33554432 ] || fail "$1: ct/worker memory limit"
	[ ! -f "$2/ct/memory.memsw.limit_in_bytes" ] || [ "$4" != 67108864 ] ||
		[ "$(cat "$2/ct/memory.memsw.limit_in_bytes")" = 100663296 ] ||
		fail "$1: ct memory+swap limit $(cat "$2/ct/memory.memsw.limit_in_bytes")"
	[ "$(cat "$3/ct/pids.max")" = 16 ] || fail "$1: ct pids.max $(cat "$3/ct/pids.max")"
	[ "$(cat "$3/ct/worker/pids.max")" = 8 ] || fail "$1: ct/worker pids.max"
}
members "before the dump" "$MEM" "$PIDS"
limits "before the dump" "$MEM" "$PIDS" 67108864

"$CRIU_LIKE" dump -t $pid -D "$tmp/img" -v4 -o dump.log 2>"$tmp/dump.err" || fail "dump"
gone() {
	i=0
	while kill -0 $pid 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 250 ] && fail "$pid still runs"; sleep 0.02
	done
}
gone
restore() { # WHAT EXPECT(ok|fail) OPTIONS...
	what=$1 expect=$2
	shift 2
	rm -f "$tmp/pidfile"
	if "$CRIU_LIKE" restore -D "$tmp/${IMG:-img}" -d --root "$R" --pidfile "$tmp/pidfile" -v4 \
		-o restore.log "$@" 2>"$tmp/restore.err"; then
		[ $expect = ok ] || fail "$what: the restore worked"
		pid=$(cat "$tmp/pidfile")
	else
		[ $expect = fail ] || fail "$what: restore"
		pid=
	fi
}
kill_tree() {
	kill -KILL $pid
	gone
	pid=
	sleep 0.1 # the pid namespace's last tasks leave their cgroups
}

# soft, the default: the cgroups removed are made again, with their limits
rm_cgroups
restore "soft, no cgroups" ok
members "soft, no cgroups" "$MEM" "$PIDS"
limits "soft, no cgroups" "$MEM" "$PIDS" 67108864
kill_tree
echo "ok: soft (default): the cgroups made again with their limits, every task in its own"

# soft over existing cgroups: their limits stay
echo 83886080 >"$MEM/ct/memory.limit_in_bytes"
restore "soft, cgroups there" ok --manage-cgroups=soft
members "soft, cgroups there" "$MEM" "$PIDS"
limits "soft, cgroups there" "$MEM" "$PIDS" 83886080
kill_tree
restore "none, cgroups there" ok --manage-cgroups=none
members "none" "$MEM" "$PIDS"
limits "none" "$MEM" "$PIDS" 83886080
kill_tree
echo "ok: soft and none leave the limits of existing cgroups alone"

# full and props write them over
restore "full" ok --manage-cgroups=full
members "full" "$MEM" "$PIDS"
limits "full" "$MEM" "$PIDS" 67108864
kill_tree
echo 83886080 >"$MEM/ct/memory.limit_in_bytes"
restore "props" ok --manage-cgroups=props
limits "props" "$MEM" "$PIDS" 67108864
kill_tree
echo "ok: full and props write the limits over existing cgroups"

# none and props need the cgroups; strict needs them gone
rm_cgroups ct
restore "none, no ct/worker" fail --manage-cgroups=none
grep -q "ct/worker does not exist: --manage-cgroups=none" "$tmp/restore.err" ||
	fail "none: not refused by name: $(cat "$tmp/restore.err")"
restore "props, no ct/worker" fail --manage-cgroups=props
mkdir "$MEM/ct/worker" "$PIDS/ct/worker"
restore "strict, cgroups there" fail --manage-cgroups=strict
grep -q "ct/worker exists already: --manage-cgroups=strict" "$tmp/restore.err" ||
	fail "strict: not refused by name: $(cat "$tmp/restore.err")"
rm_cgroups
restore "strict" ok --manage-cgroups=strict
members "strict" "$MEM" "$PIDS"
limits "strict" "$MEM" "$PIDS" 67108864
kill_tree
echo "ok: none and props refuse missing cgroups, strict existing ones, by name"

# ignore: the tree stays in criu-like's cgroups
restore "ignore" ok --manage-cgroups=ignore
[ "$(rel memory $pid)" = "/sys/fs/cgroup/memory$(own memory)" ] || fail "ignore: init in memory $(rel memory $pid)"
[ "$(rel memory $(worker_of $pid))" = "/sys/fs/cgroup/memory$(own memory)" ] || fail "ignore: the worker moved"
kill_tree
echo "ok: ignore: the tree in criu-like's own cgroups"

# --cgroup-root: the tree's cgroups made below another root
rm_cgroups
restore "cgroup-root" ok --cgroup-root "memory:$(own memory)/itest-cg.$$/moved/ct" \
	--cgroup-root "pids:$(own pids)/itest-cg.$$/moved/ct"
members "cgroup-root" "$MEM/moved" "$PIDS/moved"
limits "cgroup-root" "$MEM/moved" "$PIDS/moved" 67108864
[ ! -d "$MEM/ct" ] || fail "cgroup-root: the old cgroups were made too"
kill_tree
echo "ok: --cgroup-root moves the tree's cgroups"

# a failed restore removes what it made: the root's pids cgroup takes one task only
rm_cgroups
mkdir -p "$PIDS/one/ct" && echo 1 >"$PIDS/one/ct/pids.max"
restore "failing" fail --cgroup-root "pids:$(own pids)/itest-cg.$$/one/ct"
grep -q "its pids cgroup pids:$(own pids)/itest-cg.$$/one/ct allows 1 tasks" "$tmp/restore.err" ||
	fail "failed restore: its pids cgroup not named: $(cat "$tmp/restore.err")"
[ ! -d "$MEM/ct" ] && [ ! -d "$PIDS/one/ct/worker" ] || fail "failed restore: its cgroups are left"
[ -z "$(cat "$PIDS/one/ct/cgroup.procs")" ] || fail "failed restore: tasks are left"
[ -d "$PIDS/one/ct" ] || fail "failed restore: it removed a cgroup it did not make"
echo "ok: a failed restore removes the cgroups it made and kills its tasks"

# a frozen container (a paused one): dumped with --freeze-cgroup as it was
# found, frozen again once restored
rm_cgroups
restore "for the freezer" ok
echo FROZEN >"$FRZ/ct/freezer.state"
i=0
while [ "$(cat "$FRZ/ct/freezer.state")" != FROZEN ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "the container does not freeze"; sleep 0.02
done
"$CRIU_LIKE" dump -t $pid -D "$tmp/img2" --freeze-cgroup "$FRZ/ct" -v4 -o dump.log \
	2>"$tmp/dump2.err" || fail "dump of the frozen container"
gone
rm_cgroups
IMG=img2 restore "frozen" ok
members "frozen" "$MEM" "$PIDS"
[ "$(cat "$FRZ/ct/freezer.state")" = FROZEN ] ||
	fail "frozen: the container's freezer cgroup is $(cat "$FRZ/ct/freezer.state")"
echo THAWED >"$FRZ/ct/freezer.state"
w=$(worker_of $pid)
[ -n "$w" ] && kill -0 "$w" || fail "frozen: no worker once thawed"
kill_tree
echo "ok: a frozen container is frozen again after its restore"

# --cgroup-props: ct's TCP buffer limit (not in criu-like's list) saved on top
# of the list ("merge"), or instead of the memory controller's list
# ("replace": ct's memory limit then not saved); a read-only file refused by
# name with the tree running on; --cgroup-dump-controller: only the pids
# hierarchy, the tree restored in criu-like's own memory cgroup
rm_cgroups
restore "for --cgroup-props" ok
TCPL=memory.kmem.tcp.limit_in_bytes
echo 50331648 >"$MEM/ct/$TCPL" || fail "cannot set ct's $TCPL"
"$CRIU_LIKE" dump -t $pid -D "$tmp/img3" -R -v4 -o dump.log \
	--cgroup-props '"memory": - "properties": [ "memory.usage_in_bytes" ]' 2>"$tmp/dump3.err" &&
	fail "--cgroup-props: a read-only property was dumped"
grep -q "memory.usage_in_bytes (--cgroup-props) is read-only" "$tmp/dump3.err" ||
	fail "--cgroup-props: the read-only property not named: $(cat "$tmp/dump3.err")"
kill -0 $pid && [ -n "$(worker_of $pid)" ] || fail "--cgroup-props: the refused dump stopped the tree"
cat >"$tmp/props.yaml" <<EOF2
# the TCP buffer limit too
"memory":
 - "strategy": "merge"
 - "properties": ["$TCPL"]
EOF2
rm -rf "$tmp/img3"
"$CRIU_LIKE" dump -t $pid -D "$tmp/img3" -R -v4 -o dump.log --cgroup-props-file "$tmp/props.yaml" \
	2>"$tmp/dump3.err" || fail "dump with --cgroup-props-file"
"$CRIU_LIKE" dump -t $pid -D "$tmp/img4" -R -v4 -o dump.log \
	--cgroup-props "\"memory\": - \"strategy\": \"replace\" - \"properties\": [\"$TCPL\"]" \
	2>"$tmp/dump4.err" || fail "dump with --cgroup-props replace"
"$CRIU_LIKE" dump -t $pid -D "$tmp/img5" -v4 -o dump.log --cgroup-dump-controller pids \
	2>"$tmp/dump5.err" || fail "dump with --cgroup-dump-controller"
gone
rm_cgroups
IMG=img3 restore "--cgroup-props merge" ok
members "--cgroup-props merge" "$MEM" "$PIDS"
limits "--cgroup-props merge" "$MEM" "$PIDS" 67108864
[ "$(cat "$MEM/ct/$TCPL")" = 50331648 ] || fail "--cgroup-props merge: ct's $TCPL is $(cat "$MEM/ct/$TCPL")"
kill_tree
rm_cgroups
IMG=img4 restore "--cgroup-props replace" ok
members "--cgroup-props replace" "$MEM" "$PIDS"
[ "$(cat "$MEM/ct/$TCPL")" = 50331648 ] || fail "--cgroup-props replace: ct's $TCPL is $(cat "$MEM/ct/$TCPL")"
[ "$(cat "$MEM/ct/memory.limit_in_bytes")" != 67108864 ] ||
	fail "--cgroup-props replace: ct's memory limit was saved"
[ "$(cat "$PIDS/ct/pids.max")" = 16 ] || fail "--cgroup-props replace: ct's pids.max $(cat "$PIDS/ct/pids.max")"
kill_tree
rm_cgroups
IMG=img5 restore "--cgroup-dump-controller" ok
[ "$(rel pids $pid)" = "$PIDS/ct" ] || fail "--cgroup-dump-controller: init in pids $(rel pids $pid)"
[ "$(cg_of $pid memory)" = "$(cg_of $$ memory)" ] ||
	fail "--cgroup-dump-controller pids: init in memory $(cg_of $pid memory), not criu-like's"
[ ! -d "$MEM/ct" ] || fail "--cgroup-dump-controller pids: a memory cgroup was made"
kill_tree
sleep 100 &
s=$!
"$CRIU_LIKE" dump -t $s -R -D "$tmp/img6" --cgroup-props '"memory": - "properties": [cgroup.procs]' \
	>"$tmp/dump6.err" 2>&1 && fail "--cgroup-props cgroup.procs accepted"
kill $s
grep -q "'cgroup.procs' cannot be a property" "$tmp/dump6.err" ||
	fail "--cgroup-props cgroup.procs: $(cat "$tmp/dump6.err")"
echo "ok: --cgroup-props (merge from a file, refusals) and --cgroup-dump-controller"
echo "cgroup: a container in memory, pids and freezer cgroups restored in every --manage-cgroups mode"
