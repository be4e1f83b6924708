#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Privilege is checked first: a command that needs root, run by an ordinary
# user (setpriv to nobody) or by root without a capability it needs (dropped
# from the bounding set), exits with status 3 after ONE line on stderr naming
# the command and the missing capabilities, and does nothing else: no image
# directory or log created, no nftables change, the target not seized.
# Commands that need no privilege (--help, --version, decode, encode, check)
# still run for that user.
# Runs in a network namespace of its own, so that the nftables ruleset it
# compares is not touched by other tests.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "nonroot: needs root (to drop privileges)"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "nonroot: build first"; exit 1; }
command -v setpriv >/dev/null || { echo "nonroot: needs setpriv (util-linux)"; exit 77; }
command -v nft >/dev/null || { echo "nonroot: needs nft (nftables)"; exit 77; }

if [ -z "${NONROOT_IN_NETNS:-}" ]; then
	unshare --net true 2>/dev/null || { echo "nonroot: needs unshare --net"; exit 77; }
	NONROOT_IN_NETNS=1 CRIU_LIKE=$(realpath "$CRIU_LIKE") exec unshare --net sh "$0"
fi

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
chmod 755 "$tmp"
# nobody must reach the binary: the build dir may be under a private home.
cp "$CRIU_LIKE" "$tmp/criu-like"
chmod 755 "$tmp/criu-like"
mkdir -m 1777 "$tmp/w"
CL=$tmp/criu-like
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
NOSYSADMIN="setpriv --bounding-set=-sys_admin"

sleep 600 </dev/null >/dev/null 2>&1 &
vp=$!
# One nftables table, so that "cleanup" would have something to look at.
nft add table inet nonroot_probe || { echo "FAIL: nft add table"; exit 1; }
nft list ruleset >"$tmp/ruleset.before"

# refused WHO NAME ARGS...: run criu-like ARGS as WHO; expect exit 3, one line
# on stderr naming command NAME, nothing on stdout, nothing else done.
refused() {
	who=$1
	name=$2
	shift 2
	$who "$CL" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	what="[$who] criu-like $*"
	bad=0
	if [ "$rc" != 3 ]; then
		echo "FAIL: $what: exit status $rc, expected 3"
		bad=1
	fi
	if [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q "'$name' needs root.*cap_" "$tmp/err"; then
		echo "FAIL: $what: expected one line on stderr naming '$name' and capabilities:"
		sed 's/^/    | /' "$tmp/err" | head -n 20
		bad=1
	fi
	if [ -s "$tmp/out" ]; then
		echo "FAIL: $what: printed on stdout:"
		sed 's/^/    | /' "$tmp/out" | head -n 5
		bad=1
	fi
	if [ -e "$tmp/w/new" ] || [ -n "$(ls -A "$tmp/w/empty")" ]; then
		echo "FAIL: $what: created files:"
		find "$tmp/w" | sed 's/^/    | /'
		bad=1
		rm -rf "$tmp/w/new" "$tmp/w/empty"/*
	fi
	nft list ruleset >"$tmp/ruleset.after"
	if ! cmp -s "$tmp/ruleset.before" "$tmp/ruleset.after"; then
		echo "FAIL: $what: changed the nftables ruleset:"
		diff "$tmp/ruleset.before" "$tmp/ruleset.after" | sed 's/^/    | /'
		bad=1
		cp "$tmp/ruleset.after" "$tmp/ruleset.before"
	fi
	if grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/$vp/status ||
		! grep -q '^State:[[:space:]]*S' /proc/$vp/status; then
		echo "FAIL: $what: the target was seized or stopped:"
		grep -E '^(State|TracerPid)' /proc/$vp/status | sed 's/^/    | /'
		bad=1
	fi
	if [ "$bad" = 0 ]; then
		echo "ok: $what: $(cat "$tmp/err")"
	else
		fail=1
	fi
}

# allowed WHO ARGS...: not refused for lack of privilege (any other status).
allowed() {
	who=$1
	shift
	$who "$CL" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" = 3 ] || grep -q "needs root" "$tmp/err"; then
		echo "FAIL: [$who] criu-like $*: refused for privilege (exit status $rc)"
		sed 's/^/    | /' "$tmp/err" | head -n 5
		fail=1
	else
		echo "ok: [$who] criu-like $*: exit status $rc"
	fi
}

mkdir -m 777 "$tmp/w/empty"
refused "$NOBODY" dump dump -t "$vp" -D "$tmp/w/new" -v4
refused "$NOBODY" dump dump -t "$vp" -D "$tmp/w/new" -o dump.log --network-lock skip
refused "$NOBODY" restore restore -D "$tmp/w/empty" -v4
refused "$NOBODY" restore restore -D "$tmp/w/new" -d
refused "$NOBODY" infect-test infect-test -t "$vp"
refused "$NOBODY" net-lock net-lock list
refused "$NOBODY" net-lock net-lock cleanup
refused "$NOBODY" net-lock net-lock -D "$tmp/w/empty" keep 127.0.0.1:1,127.0.0.1:2
refused "$NOSYSADMIN" dump dump -t "$vp" -D "$tmp/w/new" -v4
refused "$NOSYSADMIN" restore restore -D "$tmp/w/empty" -v4

allowed "$NOBODY" --help
allowed "$NOBODY" --version
allowed "$NOBODY" dump --help
grep -q "exits 3" "$tmp/out" || { echo "FAIL: dump --help does not tell exit status 3"; fail=1; }
allowed "$NOBODY" check
allowed "$NOBODY" decode -D "$tmp/w/empty"
echo '{}' >"$tmp/w/in.json"
allowed "$NOBODY" encode "$tmp/w/in.json" -O "$tmp/w/out.img"

[ "$fail" = 0 ] || exit 1
echo "nonroot: every privileged command refused first, with exit status 3"
