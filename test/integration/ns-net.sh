#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A container with a network namespace of its own (unshare --net): a veth to
# a bridge outside, addresses, routes, a policy rule, sysctls, an echo server
# whose client is outside, a TCP connection over lo and an abstract unix
# socket inside. Dumped with --tcp-established and restored with --external
# veth[vc0]:ve-nt0 (then --veth-pair): the namespace comes back the same and
# the client's connection goes on. Everything runs in a network namespace of
# the test's own: the host's interfaces are never touched. ns-net.py does the
# work.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "ns-net: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "ns-net: build first"; exit 1; }
PATH=$PATH:/usr/sbin:/sbin
for t in python3 unshare nsenter ip; do
	command -v $t >/dev/null || { echo "ns-net: $t is not installed"; exit 77; }
done
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
unshare --net sh -c 'ip link add nt-probe type bridge 2>/dev/null && ip link del nt-probe &&
	ip link add nt-p0 type veth peer name nt-p1 2>/dev/null' ||
	{ echo "ns-net: no bridge or veth support in this kernel"; exit 77; }
unshare --net python3 -u test/integration/ns-net.py "$CRIU_LIKE" "$tmp"
