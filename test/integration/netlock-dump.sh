#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The network lock through real dumps and restores (--tcp-established) of an
# echo server whose client is outside the tree, in a network namespace of its
# own, for nftables and (when installed) iptables:
#   - same machine, IPv4 and IPv6: the dump kills the tree and keeps its lock
#     under the name recorded in inventory.img; the client's data is held
#     (unacknowledged, no reset) and cleanups leave the lock; restore reuses
#     it, removes it once the tree runs, and the server answers what was held;
#   - the images deleted instead: the next cleanup removes the kept lock;
#   - migration: without the dump's lock, restore installs its own; a restore
#     that fails (pages image cut short) keeps it under the images' name and
#     the client is still held; the next restore reuses and removes it;
#   - dump -R: locked during the dump, removed after, nothing recorded; a
#     restore of those images that fails removes the lock it installed;
#   - --network-lock skip: nothing locked or recorded.
# netlock-dump.py does the work.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "netlock-dump: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "netlock-dump: build first"; exit 1; }
command -v python3 >/dev/null || { echo "netlock-dump: no python3"; exit 77; }
command -v unshare >/dev/null || { echo "netlock-dump: no unshare"; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
command -v nft >/dev/null || { echo "netlock-dump: nft is not installed (package nftables)"; exit 77; }
kinds=nftables
if command -v iptables-restore >/dev/null && command -v ip6tables-restore >/dev/null; then
	kinds="$kinds iptables"
else
	echo "netlock-dump: no iptables-restore: only nftables is tested"
fi
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086 # one word per kind
unshare --net sh -c 'ip link set lo up && exec python3 -u "$0" "$@"' \
	test/integration/netlock-dump.py "$CRIU_LIKE" "$tmp" $kinds
