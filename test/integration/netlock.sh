#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The network lock (Documentation/network-lock.md) on real loopback TCP
# connections, IPv4 and IPv6, for nftables and (when installed) iptables, in
# a network namespace of its own so no other test's traffic is touched
# (nftables both through libnftables and through the nft tool):
#   - a lock on one end's tuple (output chain, or input chain) stalls data
#     sent both ways (unacknowledged, unread); removed, the data arrives;
#   - several connections of both families locked in one transaction;
#   - a cleanup leaves the lock of a running criu-like alone;
#   - a criu-like killed with its lock installed: the next dump, and the next
#     restore, remove its lock (both fail here: only the cleanup is looked at);
#   - a kept lock survives cleanups while the image directory it names holds
#     a complete inventory recording it, and is removed by the first cleanup
#     once it does not; `net-lock unlock` removes it;
#   - a dump that fails after locking (a full image directory) leaves no lock and
#     the connection works.
# netlock.py does the work.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "netlock: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "netlock: build first"; exit 1; }
command -v python3 >/dev/null || { echo "netlock: no python3"; exit 77; }
command -v unshare >/dev/null || { echo "netlock: no unshare"; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
command -v nft >/dev/null || { echo "netlock: nft is not installed (package nftables)"; exit 77; }
# nftables through libnftables (when present) and through the nft tool
kinds="nftables nftables-cli"
if command -v iptables-restore >/dev/null && command -v ip6tables-restore >/dev/null; then
	kinds="$kinds iptables"
else
	echo "netlock: no iptables-restore: only nftables is tested"
fi
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086 # one word per kind
unshare --net --mount --propagation private sh -c 'ip link set lo up && exec python3 -u "$0" "$@"' \
	test/integration/netlock.py "$CRIU_LIKE" "$tmp" $kinds
