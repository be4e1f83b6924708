#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The live-migration test topology (Documentation/migration.md, "Test
# topology"): three network namespaces on this machine, joined by a switch.
#
#   mig-a  "host A": bridge br-mig 10.77.0.1/24 fd77::1/64, uplink up-a fa:77:00:00:00:01
#   mig-b  "host B": bridge br-mig 10.77.0.2/24 fd77::2/64, uplink up-b fa:77:00:00:00:02
#   mig-c  the clients: eth0 10.77.0.100/24 fd77::100/64
#   mig-sw the switch: bridge sw0 with ports sw-a, sw-b, sw-c
#
# Each bridge has its uplink's MAC, as a host's bridge on its NIC: a port
# with a lower MAC would become the bridge's (a veth's outside end with the
# kernel's random MAC, but the restore gives it one above: migrate.py checks
# that B's bridge keeps its uplink's MAC while its veth is there).
#
# One L2 segment: a container whose veth is on br-mig of either host (e.g.
# 10.77.0.10/24) is reachable from mig-c through that host. Both hosts'
# bridges have the same name, so a container restored on B finds "its"
# bridge there. With --criu PATH, `up` also starts one `criu-like service`
# per host (ip netns exec), each with its own RPC socket and migration
# listener:
#
#   host A: --address $STATE/a.sock --listen 10.77.0.1:27100 -W $STATE/a
#   host B: --address $STATE/b.sock --listen 10.77.0.2:27100 -W $STATE/b
#
# Usage: migrate-topo.sh up [--criu PATH] [-v4] | down | status
# STATE (default /run/criu-like-mig) holds the pid files, sockets and logs.
# Both subcommands are idempotent; `down` stops the services and every
# process left in the four namespaces, and removes the namespaces (and with
# them every veth and bridge).
set -u
PATH=$PATH:/usr/sbin:/sbin
: "${STATE:=/run/criu-like-mig}"
NSS="mig-a mig-b mig-c mig-sw"

die() {
	echo "migrate-topo: $*" >&2
	exit 1
}

in_ns() {
	ns=$1
	shift
	ip netns exec "$ns" "$@"
}

# host_ip N: the host's address on the segment
host_ip() { [ "$1" = a ] && echo 10.77.0.1 || echo 10.77.0.2; }
host_ip6() { [ "$1" = a ] && echo fd77::1 || echo fd77::2; }

ns_up() {
	ip netns list | grep -qw "^$1" || ip netns add "$1" || die "cannot add namespace $1"
	in_ns "$1" ip link set lo up
}

# host_mac N: the MAC of the host's uplink, and so of its bridge
host_mac() { [ "$1" = a ] && echo fa:77:00:00:00:01 || echo fa:77:00:00:00:02; }

# port NS IF SWPORT [MAC]: a veth IF in NS (with MAC) whose other end SWPORT is on the switch
port() {
	in_ns "$1" ip link show "$2" >/dev/null 2>&1 && return 0
	ip link add "tmp-$3" type veth peer name "tmp-$2-$3" ${4:+address $4} ||
		die "cannot add veth for $2"
	ip link set "tmp-$3" netns mig-sw
	in_ns mig-sw ip link set "tmp-$3" name "$3"
	in_ns mig-sw ip link set "$3" master sw0 up
	ip link set "tmp-$2-$3" netns "$1"
	in_ns "$1" ip link set "tmp-$2-$3" name "$2"
	in_ns "$1" ip link set "$2" up
}

topo_up() {
	for ns in $NSS; do
		ns_up $ns
	done
	in_ns mig-sw ip link show sw0 >/dev/null 2>&1 ||
		in_ns mig-sw ip link add sw0 type bridge stp_state 0 forward_delay 0
	in_ns mig-sw ip link set sw0 up
	for h in a b; do
		in_ns mig-$h ip link show br-mig >/dev/null 2>&1 ||
			in_ns mig-$h ip link add br-mig type bridge stp_state 0 forward_delay 0
		in_ns mig-$h ip link set br-mig up
		in_ns mig-$h ip addr replace "$(host_ip $h)/24" dev br-mig
		in_ns mig-$h ip -6 addr replace "$(host_ip6 $h)/64" dev br-mig nodad
		port mig-$h up-$h sw-$h "$(host_mac $h)"
		in_ns mig-$h ip link set up-$h master br-mig up
	done
	port mig-c eth0 sw-c
	in_ns mig-c ip addr replace 10.77.0.100/24 dev eth0
	in_ns mig-c ip -6 addr replace fd77::100/64 dev eth0 nodad
}

# running PIDFILE: its process exists and is no zombie (PID 1 reaps late here)
running() {
	[ -s "$1" ] || return 1
	st=$(sed 's/.*) //' "/proc/$(cat "$1")/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$st" ] && [ "$st" != Z ]
}

services_up() {
	criu=$1
	shift
	mkdir -p "$STATE"
	for h in a b; do
		running "$STATE/$h.pid" && continue
		mkdir -p "$STATE/$h"
		nsenter --net=/run/netns/mig-$h "$criu" service --address "$STATE/$h.sock" \
			--listen "$(host_ip $h):27100" -W "$STATE/$h" --daemon \
			--pidfile "$STATE/$h.pid" -o "$STATE/$h.log" "$@" ||
			die "cannot start the service of host $h (log: $STATE/$h.log)"
	done
}

# stop PIDFILE: SIGTERM, then SIGKILL after 2 s
stop() {
	[ -s "$1" ] || return 0
	p=$(cat "$1")
	if kill -TERM "$p" 2>/dev/null; then
		i=0
		while running "$1" && [ $i -lt 100 ]; do
			sleep 0.02
			i=$((i + 1))
		done
		kill -KILL "$p" 2>/dev/null
	fi
	rm -f "$1"
}

topo_down() {
	for h in a b; do
		stop "$STATE/$h.pid"
	done
	for ns in $NSS; do
		ip netns list | grep -qw "^$ns" || continue
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$STATE"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
[ "$(id -u)" = 0 ] || die "needs root"
case "$cmd" in
up)
	criu=
	extra=
	while [ $# -gt 0 ]; do
		case "$1" in
		--criu) criu=$2; shift ;;
		-v*) extra="$extra $1" ;;
		*) die "unknown option $1" ;;
		esac
		shift
	done
	topo_up
	# shellcheck disable=SC2086
	[ -z "$criu" ] || services_up "$criu" $extra
	;;
down) topo_down ;;
status)
	for ns in $NSS; do
		ip netns list | grep -qw "^$ns" && echo "$ns: up" || echo "$ns: down"
	done
	for h in a b; do
		if running "$STATE/$h.pid"; then
			echo "service $h: pid $(cat "$STATE/$h.pid")"
		else
			echo "service $h: not running"
		fi
	done
	;;
*) die "usage: migrate-topo.sh up [--criu PATH] [-vN] | down | status" ;;
esac
