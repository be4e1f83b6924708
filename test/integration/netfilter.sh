#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A container (unshare --net) behind a bridge, with a veth to it, whose own
# netfilter does port forwarding (DNAT :80 -> :8080), masquerades what it
# sends from an address nobody outside can route back to, and drops every
# new connection once its two connections exist (`ct state established
# accept`). A client outside talks to the DNATed port, and the container's
# client talks through the MASQUERADE to a server outside, across a dump and
# a restore (--external veth[vc0]:ve-nf0): no reset, no lost byte, and the
# container's ruleset and conntrack table come back. Everything runs in a
# network namespace of the test's own (netfilter.py does the work).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "netfilter: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "netfilter: build first"; exit 1; }
PATH=$PATH:/usr/sbin:/sbin
for t in python3 unshare nsenter ip nft conntrack; do
	command -v $t >/dev/null || { echo "netfilter: $t is not installed"; exit 77; }
done
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
unshare --net sh -c 'ip link add nf-probe type bridge 2>/dev/null && ip link del nf-probe &&
	ip link add nf-p0 type veth peer name nf-p1 2>/dev/null' ||
	{ echo "netfilter: no bridge or veth support in this kernel"; exit 77; }
unshare --net python3 -u test/integration/netfilter.py "$CRIU_LIKE" "$tmp"
