#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# CRIU's RPC through `criu-like swrk 3`, driven as go-criu drives `criu swrk`
# (test/integration/rpc-client.c): VERSION answers a CRIU version runc and
# podman accept (>= 31100 as go-criu counts it); CHECK; FEATURE_CHECK false
# for what does not exist; DUMP and RESTORE of a ticking victim with
# notify_scripts, the notifications in CRIU's order, the counter going on
# from where it was; refusals by field name; a client that fails a hook or
# drops the connection mid-dump leaves the tree running, not traced, and the
# directory not a checkpoint.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
C=$B/test/integration/rpc-client
[ "$(id -u)" = 0 ] || { echo "rpc-swrk: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$C" ] && [ -x "$CRIU_LIKE" ] || { echo "rpc-swrk: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
S="swrk:$CRIU_LIKE"

tmp=$(mktemp -d)
vp=
trap '[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	for f in "$tmp"/img*/dump.log "$tmp"/img*/restore.log; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|Warn' "$f" | tail -8; }
	done
	exit 1
}
# rpc OUT REQUEST ARGS...: the client's output in $tmp/OUT, its status in $rc
rpc() {
	out=$1
	shift
	"$C" "$S" "$@" >"$tmp/$out" 2>>"$tmp/stderr"
	rc=$?
}
expect() { # expect OUT PATTERN
	grep -q -- "$2" "$tmp/$1" || { echo "---- $1:"; cat "$tmp/$1"; fail "$1: no '$2'"; }
}
last_tick() { grep '^tick' "$tmp/v" | tail -1 | cut -d' ' -f2; }
wait_ticks_past() { # until the victim ticks past $1
	n=0
	while [ "$(last_tick)" -le "$1" ]; do
		n=$((n + 1))
		[ $n -le 200 ] || return 1
		sleep 0.05
	done
}
intact() { # intact WHAT: the victim runs free (once the worker has let go: 10 s) and ticks
	n=0
	while :; do
		st=$(awk '/^State:/ { print $2 } /^TracerPid:/ { print $2 }' /proc/$vp/status | tr '\n' ' ')
		case "$st" in
		"S 0 " | "R 0 ") break ;;
		esac
		n=$((n + 1))
		[ $n -le 1000 ] || fail "$1: pid $vp is not running free (state/tracer: $st)"
		sleep 0.01
	done
	t=$(last_tick)
	wait_ticks_past "$t" || fail "$1: the victim stopped ticking"
}

# 1. VERSION: a CRIU version, criu-like's own in name and extra
rpc version version
[ $rc = 0 ] || fail "VERSION failed"
expect version "name=criu-like "
set -- $(sed -n 's/.*version=\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\).*/\1 \2 \3/p' "$tmp/version")
[ $(($1 * 10000 + $2 * 100 + $3)) -ge 31100 ] || fail "VERSION $1.$2.$3 is below podman's 31100"
# 2. CHECK, FEATURE_CHECK (pre-dump and lazy pages do not exist: false)
rpc check check
[ $rc = 0 ] || fail "CHECK failed: $(cat "$tmp/check")"
rpc feature feature
expect feature "success=1 mem_track=1/1 lazy_pages=1/0 pidfd_store=1/0"
# 3. not there yet: named
rpc cpuinfo cpuinfo-check
expect cpuinfo "CPUINFO_CHECK is not available.*cpuinfo"
rpc ps page-server
expect ps "PAGE_SERVER is not available"

setsid "$V" mem 4 >"$tmp/v" 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' "$tmp/v" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || fail "victim did not start"
	sleep 0.01
done

# 4. refusals by field name, the tree untouched
mkdir "$tmp/img0"
rpc refuse1 restore dir="$tmp/img0" track_mem=1 parent_img=x
expect refuse1 "success=0.*criu_opts.parent_img"
rpc refuse2 restore dir="$tmp/img0" inherit_fd=fd[1]:pipe
expect refuse2 "success=0.*criu_opts.inherit_fd"
rpc refuse3 dump dir="$tmp/img0" pid=$vp unknown_field=1
expect refuse3 "success=0.*field number 200"
rpc refuse4 dump dir="$tmp/img0" pid=$vp log_file=../x.log
expect refuse4 "success=0.*criu_opts.log_file"
intact "after the refusals"

# 5. a client that fails a hook, or goes away mid-dump: the tree goes on
mkdir "$tmp/img1"
rpc nfail dump dir="$tmp/img1" pid=$vp notify_fail=post-dump
expect nfail "success=0.*post-dump"
intact "after a failed post-dump notification"
rpc drop dump dir="$tmp/img1" pid=$vp drop_at=post-dump
expect drop "notify post-dump"
intact "after the client dropped the connection at post-dump"
rpc drop2 dump images_dir_fd=-1 images_dir="$tmp/img1" pid=$vp drop=1
sleep 0.5
intact "after the client dropped the connection after its request"
"$CRIU_LIKE" restore -D "$tmp/img1" -d 2>"$tmp/norestore" &&
	fail "a dump whose client went away left a checkpoint"

# 6. PRE_DUMP, then DUMP on top of it (parent_img) and RESTORE with notifications, in CRIU's order
mkdir "$tmp/pre" "$tmp/img"
rpc predump pre-dump dir="$tmp/pre" pid=$vp track_mem=1
[ $rc = 0 ] || fail "PRE_DUMP failed: $(cat "$tmp/predump")"
ls "$tmp/pre"/pagemap-*.img >/dev/null 2>&1 || fail "PRE_DUMP wrote no pagemap"
intact "after the pre-dump"
before=$(last_tick)
rpc dump dump dir="$tmp/img" pid=$vp notify=1 log_level=4 parent_img=../pre track_mem=1
[ $rc = 0 ] || fail "DUMP failed: $(cat "$tmp/dump")"
[ "$(grep '^notify' "$tmp/dump" | cut -d' ' -f2 | tr '\n' ' ')" = "pre-dump post-dump " ] ||
	fail "dump notifications: $(grep '^notify' "$tmp/dump" | tr '\n' ' ')"
[ "$(readlink "$tmp/img/parent")" = ../pre ] || fail "the dump has no parent link to the pre-dump"
[ -e /proc/$vp ] && [ "$(awk '/^State:/ { print $2 }' /proc/$vp/status)" != Z ] &&
	fail "the dumped tree still runs"
wait $vp 2>/dev/null
dumped=$(last_tick)
[ "$dumped" -ge "$before" ] || fail "tick went back before the dump"
rpc restore restore dir="$tmp/img" notify=1 log_file=rst.log
[ $rc = 0 ] || fail "RESTORE failed: $(cat "$tmp/restore")"
order=$(grep '^notify' "$tmp/restore" | cut -d' ' -f2,3 | tr '\n' ' ')
[ "$order" = "pre-restore 0 setup-namespaces $vp post-setup-namespaces 0 post-restore $vp pre-resume 0 post-resume 0 " ] ||
	fail "restore notifications: $order"
expect restore "resp RESTORE success=1 pid=$vp"
[ -e "$tmp/img/rst.log" ] || fail "log_file rst.log is not in the image directory"
wait_ticks_past "$dumped" || fail "the restored victim does not tick"
[ "$(grep -c '^tick 1 ' "$tmp/v")" = 1 ] || fail "the counter started again from 1"
grep -q 'errors [1-9]' "$tmp/v" && fail "the restored victim found its memory changed"
echo "rpc-swrk: ok (ticks $dumped at the dump, $(last_tick) now)"
