#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The packets the network lock holds (net/nfq-hold*.c, nfq-holder.c, Documentation/network-lock.md
# "Holding packets"): data sent to a frozen or killed tree reaches the restored one
# without waiting for a retransmission; --no-packet-hold drops; dump -R; a killed
# holder drops and leaves nothing behind. In a network namespace of its own whose
# minimum retransmission timeout is 3 s, so that a retransmission is told apart by
# its count (TCP_INFO), not by time, and no tail loss probe (tcp_early_retrans 0).
# netlock-hold.py does the work.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "netlock-hold: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "netlock-hold: build first"; exit 1; }
command -v python3 >/dev/null || { echo "netlock-hold: no python3"; exit 77; }
command -v unshare >/dev/null || { echo "netlock-hold: no unshare"; exit 77; }
PATH=$PATH:/usr/sbin:/sbin
command -v iptables-restore >/dev/null ||
	{ echo "netlock-hold: no iptables-restore (the holder's rules are iptables')"; exit 77; }
kinds=iptables
command -v nft >/dev/null && kinds="nftables $kinds"
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086 # one word per kind
unshare --net sh -c 'ip link set lo up && sysctl -qw net.ipv4.tcp_rto_min_us=3000000 net.ipv4.tcp_early_retrans=0 &&
	exec python3 -u "$0" "$@"' test/integration/netlock-hold.py "$CRIU_LIKE" "$tmp" $kinds
