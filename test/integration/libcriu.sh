#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The client library libcriu-like (lib/c/, Documentation/rpc.md "C library"):
# a program built against it (test/integration/libcriu-test.c) dumps and
# restores a ticking victim (a) in swrk mode, criu-like started by the
# library from PATH, through the global options of the static library, and
# (b) through `criu-like service`, with an options object of its own, built
# with pkg-config against the shared library, and criu_dump_iters();
# criu_pre_dump() and criu_set_parent_images() in (a) when the kernel tracks memory; the counter goes on from where
# it was, the notifications come in CRIU's order; (c) a peer that is not root
# is refused by the daemon with its message; options criu-like does not have
# (criu_set_cpu_cap()) are refused by name; the swrk restore is
# criu_restore_child()'s, with rst_sibling.
# A program written for CRIU's libcriu (libcriu-compat.c) builds unchanged
# and runs; `make install` puts the library, its symlinks, the headers and a
# pkg-config file for PREFIX under DESTDIR, and the same program builds
# against that.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
T=$B/test/integration/libcriu-test
TS=$B/test/integration/libcriu-test-so
COMPAT=$B/test/integration/libcriu-compat
[ "$(id -u)" = 0 ] || { echo "libcriu: needs root"; exit 77; }
for f in "$V" "$T" "$TS" "$COMPAT" "$CRIU_LIKE"; do
	[ -x "$f" ] || { echo "libcriu: build first ($f is missing)"; exit 1; }
done
command -v setpriv >/dev/null || { echo "libcriu: setpriv is not installed"; exit 77; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
T=$(realpath "$T")
TS=$(realpath "$TS")

tmp=$(mktemp -d)
chmod 755 "$tmp" # nobody must reach the socket to be refused by the daemon itself
vp=
dp=
trap '[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null; [ -n "$dp" ] && kill -KILL "$dp" 2>/dev/null
	rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	for f in "$tmp"/img*/lib-*.log "$tmp/svc.log"; do
		[ -s "$f" ] && { echo "---- $f"; grep -E 'Error|Warn' "$f" | tail -8; }
	done
	exit 1
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
# dump_restore WHAT CLIENT SERVICE DUMP RESTORE [PARENT]: the victim dumped (on
# top of the pre-dump PARENT) and restored, ticking on; dump-iters pre-dumps
# into img/1 and dumps into img/2
dump_restore() {
	what=$1 client=$2 svc=$3 dcmd=$4 rcmd=$5 parent=${6:-}
	img=$tmp/img-$what
	mkdir "$img" "$img/1" "$img/2"
	before=$(last_tick)
	"$client" "$svc" "$dcmd" "$img" "$vp" $parent >"$tmp/$what-dump" 2>&1 ||
		fail "$what: the dump failed: $(cat "$tmp/$what-dump")"
	notes="pre-dump post-dump "
	if [ "$dcmd" = dump-iters ]; then
		notes="pre-dump pre-dump post-dump "
		[ "$(readlink "$img/2/parent")" = ../1 ] || fail "$what: no parent link in img/2"
		img=$img/2
	fi
	[ -z "$parent" ] || [ "$(readlink "$img/parent")" = "$parent" ] ||
		fail "$what: the dump has no parent link to $parent (criu_set_parent_images())"
	[ "$(grep '^notify' "$tmp/$what-dump" | cut -d' ' -f2 | tr '\n' ' ')" = "$notes" ] ||
		fail "$what: dump notifications: $(grep '^notify' "$tmp/$what-dump" | tr '\n' ' ')"
	[ -e /proc/$vp ] && [ "$(awk '/^State:/ { print $2 }' /proc/$vp/status)" != Z ] &&
		fail "$what: the dumped tree still runs"
	wait $vp 2>/dev/null
	dumped=$(last_tick)
	[ "$dumped" -ge "$before" ] || fail "$what: the tick went back before the dump"
	# criu_restore_child() asks for rst_sibling: the tree a child of the client
	[ "$what" = swrk ] && rcmd=restore-child
	"$client" "$svc" "$rcmd" "$img" >"$tmp/$what-restore" 2>&1 ||
		fail "$what: the restore failed: $(cat "$tmp/$what-restore")"
	expect $what-restore "$rcmd ret=$vp errno=0"
	order=$(grep '^notify' "$tmp/$what-restore" | cut -d' ' -f2,3 | tr '\n' ' ')
	[ "$order" = "pre-restore 0 setup-namespaces $vp post-setup-namespaces 0 post-restore $vp pre-resume 0 post-resume 0 " ] ||
		fail "$what: restore notifications: $order"
	[ -s "$img/lib-restore.log" ] || fail "$what: no lib-restore.log (criu_set_log_file())"
	wait_ticks_past "$dumped" || fail "$what: the restored victim does not tick past $dumped"
	[ "$(grep -c '^tick 1 ' "$tmp/v")" = 1 ] || fail "$what: the counter started again from 1"
	grep -q 'errors [1-9]' "$tmp/v" && fail "$what: the restored victim found its memory changed"
	echo "$what: dumped at tick $dumped, ticking at $(last_tick)"
}

# 0. a program written for CRIU's libcriu, as built by the Makefile
"$COMPAT" "$CRIU_LIKE" >"$tmp/compat" 2>&1 || fail "libcriu-compat: $(cat "$tmp/compat")"
expect compat "CRIU 31701 .*check_version(30000) 1"

# 1. swrk: criu-like found in PATH by the library; VERSION, FEATURE_CHECK (lazy pages:
#    this kernel has userfaultfd with every event they use; no pidfd store)
PATH="$(dirname "$CRIU_LIKE"):$PATH" "$T" swrk version >"$tmp/version" 2>&1 ||
	fail "criu_get_version() from PATH: $(cat "$tmp/version")"
expect version "version 31701 at-least-31100 1"
"$T" swrk:/nonexistent/criu-like check >"$tmp/nobin" 2>&1 && fail "a missing binary did not fail"
expect nobin "check ret=-111 errno=2 msg=cannot run /nonexistent/criu-like swrk"
"$T" "swrk:$CRIU_LIKE" feature >"$tmp/feature" 2>&1 || fail "feature: $(cat "$tmp/feature")"
expect feature "features mem_track=[01] lazy_pages=1 pidfd_store=0"

setsid "$V" mem 4 >"$tmp/v" 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' "$tmp/v" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || fail "victim did not start"
	sleep 0.01
done
# an option criu-like does not have: the request is refused naming it, the tree untouched
mkdir "$tmp/img-root"
"$T" "swrk:$CRIU_LIKE" dump-cap "$tmp/img-root" $vp >"$tmp/root" 2>&1 && fail "criu_set_cpu_cap() was not refused"
expect root "dump-cap ret=-52 errno=[1-9][0-9]* msg=.*criu_opts.cpu_cap"
t=$(last_tick)
wait_ticks_past "$t" || fail "the victim stopped after a refused dump"

# criu_pre_dump() first, when the kernel can track memory
parent=
if grep -q "mem_track=1" "$tmp/feature"; then
	mkdir "$tmp/img-pre"
	"$T" "swrk:$CRIU_LIKE" pre-dump "$tmp/img-pre" $vp >"$tmp/pre" 2>&1 ||
		fail "criu_pre_dump(): $(cat "$tmp/pre")"
	ls "$tmp/img-pre"/pagemap-*.img >/dev/null 2>&1 || fail "criu_pre_dump() wrote no pagemap"
	parent=../img-pre
fi
PATH="$(dirname "$CRIU_LIKE"):$PATH" dump_restore swrk "$T" swrk dump restore $parent

# 2. the daemon, the shared library through pkg-config, criu_local_*()
"$CRIU_LIKE" service --address "$tmp/s.sock" --daemon --pidfile "$tmp/pid" -o "$tmp/svc.log" ||
	fail "criu-like service --daemon failed"
dp=$(cat "$tmp/pid")
[ -S "$tmp/s.sock" ] || fail "the daemon has no socket"
dump_restore service "$TS" "unix:$tmp/s.sock" local-dump local-restore
if grep -q "mem_track=1" "$tmp/feature"; then
	dump_restore iters "$TS" "unix:$tmp/s.sock" dump-iters restore
fi

# 3. not root: the daemon refuses, the library says why
setpriv --reuid=65534 --regid=65534 --clear-groups "$TS" "unix:$tmp/s.sock" check \
	>"$tmp/nobody" 2>&1 && fail "a peer that is not root was served"
expect nobody "check ret=-52 errno=1 msg=criu-like service serves root only.*uid 65534"
kill -TERM "$dp"
n=0
while kill -0 "$dp" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 100 ] || fail "the daemon did not stop on SIGTERM"
	sleep 0.05
done
dp=

# 4. make install: the library, its symlinks, the headers and criu-like.pc for PREFIX
I=$tmp/inst
make -s B="$B" DESTDIR="$I" PREFIX=/usr install >"$tmp/install" 2>&1 || fail "make install: $(tail -5 "$tmp/install")"
L=$I/usr/lib
[ "$(readlink "$L/libcriu-like.so")" = libcriu-like.so.1 ] &&
	[ -f "$L/$(readlink "$L/libcriu-like.so.1")" ] && [ -f "$L/libcriu-like.a" ] &&
	[ -f "$I/usr/include/criu-like/criu.h" ] && [ -f "$I/usr/include/criu-like/criu/criu.h" ] ||
	fail "make install: $(cd "$I" && find . | sort | tr '\n' ' ')"
grep -q '^prefix=/usr$' "$L/pkgconfig/criu-like.pc" || fail "criu-like.pc: $(cat "$L/pkgconfig/criu-like.pc")"
flags=$(PKG_CONFIG_PATH="$L/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$I" pkg-config --cflags --libs criu-like) ||
	fail "pkg-config does not know the installed criu-like.pc"
${CC:-cc} -o "$tmp/compat-inst" test/integration/libcriu-compat.c $flags >"$tmp/cc" 2>&1 ||
	fail "libcriu-compat.c does not build against the installed library: $(cat "$tmp/cc")"
LD_LIBRARY_PATH=$L "$tmp/compat-inst" "$CRIU_LIKE" >"$tmp/compat2" 2>&1 ||
	fail "libcriu-compat built against the installed library: $(cat "$tmp/compat2")"
echo "libcriu: ok"
