#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# CRIU's RPC through `criu-like swrk 3`, driven as go-criu drives `criu swrk`
# (test/integration/rpc-client.c): VERSION answers a CRIU version runc and
# podman accept (>= 31100 as go-criu counts it); CHECK; FEATURE_CHECK
# (memory tracking and lazy pages true on this kernel, the pidfd store
# false); CPUINFO_DUMP and CPUINFO_CHECK; DUMP and RESTORE of a ticking victim
# with notify_scripts, the notifications in CRIU's order, the counter going
# on from where it was; refusals by field name; a client that fails a hook or
# drops the connection mid-dump leaves the tree running, not traced, and the
# directory not a checkpoint; PAGE_SERVER at one end (status-ready, status_fd,
# its pid and port answered), a DUMP with ps at the other, over TLS too, and
# PAGE_SERVER_CHLD with a DUMP whose ps.fd is a connection the client made,
# each restored from what the page server received; a RESTORE with
# lazy_pages and the client's lazy-pages daemon; network-lock and
# network-unlock around a tree with a network namespace of its own.
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
# 2. CHECK, FEATURE_CHECK (this kernel has uffd-wp and PAGEMAP_SCAN, and uffd
#    with every event lazy pages use; criu-like has no pidfd store: false)
rpc check check
[ $rc = 0 ] || fail "CHECK failed: $(cat "$tmp/check")"
rpc feature feature
expect feature "success=1 mem_track=1/1 lazy_pages=1/1 pidfd_store=1/0"
# 3. CPUINFO_DUMP, CPUINFO_CHECK (test/integration/cpuinfo.sh checks a doctored image)
mkdir "$tmp/cpu" "$tmp/nocpu"
rpc cpud cpuinfo-dump dir="$tmp/cpu"
[ $rc = 0 ] && [ -s "$tmp/cpu/cpuinfo.img" ] || fail "CPUINFO_DUMP: $(cat "$tmp/cpud")"
rpc cpuc cpuinfo-check dir="$tmp/cpu" cpu_cap=7
[ $rc = 0 ] || fail "CPUINFO_CHECK of this CPU's own image: $(cat "$tmp/cpuc")"
rpc cpun cpuinfo-check dir="$tmp/nocpu"
expect cpun "success=0.*cpuinfo.img"
rpc psn page-server dir="$tmp/nocpu"
expect psn "success=0.*criu_opts.ps: PAGE_SERVER needs it"

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

gone() { # until pid $1 is gone (its parent reaps it)
	n=0
	while [ -e /proc/$1 ] && [ "$(awk '/^State:/ { print $2 }' /proc/$1/status 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		[ $n -le 1000 ] || return 1
		sleep 0.01
	done
}
# ps_round NAME REQUEST DUMP-ARGS...: a page server by REQUEST into $tmp/NAME.srv, a dump
# of the victim to it (DUMP-ARGS; PORT replaced by its port), a restore from the server's
# directory with the dump's other images copied next to the pages; the counter goes on
ps_round() {
	name=$1 req=$2
	shift 2
	mkdir "$tmp/$name.srv" "$tmp/$name.src"
	rpc $name.ps $req dir="$tmp/$name.srv" ps_address=127.0.0.1 ps_port=0 notify=1 \
		status_fd=1 $PSTLS_SRV
	[ $rc = 0 ] || fail "$req: $(cat "$tmp/$name.ps")"
	[ "$(grep -c '^notify status-ready 0' "$tmp/$name.ps")" = 1 ] ||
		fail "$req: no status-ready: $(cat "$tmp/$name.ps")"
	expect $name.ps "status_fd ready"
	port=$(sed -n 's/.*ps_port=\([0-9]*\).*/\1/p' "$tmp/$name.ps")
	pspid=$(sed -n 's/.*ps_pid=\([0-9]*\).*/\1/p' "$tmp/$name.ps")
	[ "${port:-0}" -gt 0 ] && [ -d "/proc/$pspid" ] || fail "$req: no server at pid $pspid port $port"
	grep -q "^criu-like\|criu-like" /proc/$pspid/cmdline || fail "$req: pid $pspid is not criu-like"
	before=$(last_tick)
	args=$(echo "$*" | sed "s/PORT/$port/g")
	# shellcheck disable=SC2086
	rpc $name.dump dump dir="$tmp/$name.src" pid=$vp $args
	[ $rc = 0 ] || fail "$name: DUMP to the page server: $(cat "$tmp/$name.dump")"
	gone $pspid || fail "$name: the page server (pid $pspid) did not exit after the dump"
	gone $vp || fail "$name: the dumped tree still runs"
	ls "$tmp/$name.srv"/pages-*.img "$tmp/$name.srv"/pagemap-$vp.img >/dev/null 2>&1 ||
		fail "$name: the page server received no pages"
	ls "$tmp/$name.src"/pages-*.img >/dev/null 2>&1 && fail "$name: the pages stayed with the dump"
	dumped=$(last_tick)
	[ "$dumped" -ge "$before" ] || fail "$name: tick went back"
	for f in "$tmp/$name.src"/*.img "$tmp/$name.src"/stats-dump; do
		[ -e "$tmp/$name.srv/${f##*/}" ] || cp "$f" "$tmp/$name.srv/"
	done
	rpc $name.rst restore dir="$tmp/$name.srv"
	expect $name.rst "resp RESTORE success=1 pid=$vp"
	wait_ticks_past "$dumped" || fail "$name: the victim restored from the page server does not tick"
}

# 7. PAGE_SERVER (a daemon of its own, as CRIU's) and a DUMP with ps address and port
PSTLS_SRV=
ps_round ps1 page-server ps_address=127.0.0.1 ps_port=PORT
# 8. PAGE_SERVER_CHLD (a child of swrk) and a DUMP whose ps.fd is the client's connection
ps_round ps2 page-server-chld ps_connect=127.0.0.1:PORT
# 9. TLS (the RPC's tls fields) both ends
if command -v openssl >/dev/null; then
	(
		cd "$tmp" || exit 1
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=test ca" \
			-keyout ca.key -out ca.pem 2>/dev/null || exit 1
		for who in server client; do
			openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout $who.key \
				-out $who.csr 2>/dev/null || exit 1
			printf 'subjectAltName=IP:127.0.0.1\n' >$who.ext
			openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
				-days 2 -extfile $who.ext -out $who.pem 2>/dev/null || exit 1
		done
	) || fail "cannot make the test certificates"
	PSTLS_SRV="tls=1 tls_cacert=$tmp/ca.pem tls_cert=$tmp/server.pem tls_key=$tmp/server.key"
	ps_round ps3 page-server ps_address=127.0.0.1 ps_port=PORT tls=1 tls_cacert=$tmp/ca.pem \
		tls_cert=$tmp/client.pem tls_key=$tmp/client.key log_level=4
	grep -q "TLS" "$tmp/ps3.src/dump.log" || fail "the dump did not use TLS"
else
	echo "rpc-swrk: no openssl, TLS through the RPC not tested"
fi
# 9b. RESTORE with lazy_pages: the lazy-pages daemon is the client's (started here, as with CRIU)
mkdir "$tmp/lazy"
rpc lzdump dump dir="$tmp/lazy" pid=$vp
[ $rc = 0 ] || fail "DUMP for the lazy restore: $(cat "$tmp/lzdump")"
gone $vp || fail "the tree dumped for the lazy restore still runs"
dumped=$(last_tick)
"$CRIU_LIKE" lazy-pages -D "$tmp/lazy" -o lazy-pages.log >/dev/null 2>&1 &
lzp=$!
rpc lzrst restore dir="$tmp/lazy" lazy_pages=1 log_level=4
expect lzrst "resp RESTORE success=1 pid=$vp"
grep -q "lazy" "$tmp/lazy/restore.log" || fail "the restore was not lazy"
wait_ticks_past "$dumped" || fail "the lazily restored victim does not tick"
wait $lzp || fail "lazy-pages failed: $(tail -3 "$tmp/lazy/lazy-pages.log")"
grep -q "errors [1-9]" "$tmp/v" && fail "the lazily restored victim found its memory changed"
# 10. status_fd of a dump is refused (only a page server reports readiness)
rpc psbad dump dir="$tmp/img0" pid=$vp ps_address=127.0.0.1 ps_port=1 status_fd=1
expect psbad "success=0.*criu_opts.status_fd"
intact "after the page server rounds"

# 11. network-lock and network-unlock: a tree with a network namespace of its own
kill -KILL $vp
gone $vp
setsid unshare -n "$V" mem 4 >"$tmp/v" 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' "$tmp/v" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || fail "netns victim did not start"
	sleep 0.01
done
mkdir "$tmp/net"
rpc netr dump dir="$tmp/net" pid=$vp notify=1 leave_running=1
[ $rc = 0 ] || fail "DUMP -R of the netns tree: $(cat "$tmp/netr")"
order=$(grep '^notify' "$tmp/netr" | cut -d' ' -f2 | tr '\n' ' ')
[ "$order" = "pre-dump network-lock post-dump network-unlock " ] || fail "dump -R notifications: $order"
rpc netd dump dir="$tmp/net" pid=$vp notify=1
[ $rc = 0 ] || fail "DUMP of the netns tree: $(cat "$tmp/netd")"
order=$(grep '^notify' "$tmp/netd" | cut -d' ' -f2 | tr '\n' ' ')
[ "$order" = "pre-dump network-lock post-dump " ] || fail "dump notifications: $order"
wait $vp 2>/dev/null
dumped=$(last_tick)
rpc netrst restore dir="$tmp/net" notify=1
[ $rc = 0 ] || fail "RESTORE of the netns tree: $(cat "$tmp/netrst")"
order=$(grep '^notify' "$tmp/netrst" | cut -d' ' -f2 | tr '\n' ' ')
[ "$order" = "pre-restore setup-namespaces post-setup-namespaces post-restore pre-resume network-unlock post-resume " ] ||
	fail "restore notifications: $order"
wait_ticks_past "$dumped" || fail "the restored netns victim does not tick"
echo "rpc-swrk: ok (ticks $dumped at the last dump, $(last_tick) now)"
