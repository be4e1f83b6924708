#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages the build and the tests need, only when one is missing.
# With everything present this is a single dpkg-query call and returns at once.
set -e

PKGS="gcc make binutils pkg-config protobuf-c-compiler libprotobuf-c-dev \
libnl-3-dev libnl-route-3-dev libcap-dev libbsd-dev libcmocka-dev libgnutls28-dev libnetfilter-queue-dev libnetfilter-conntrack-dev openssl \
iproute2 nftables iptables conntrack python3 clang-format cppcheck util-linux procps \
strace gdb sqlite3 bash redis-server redis-tools clang libclang-rt-14-dev postgresql busybox-static runc \
podman netavark aardvark-dns containerd lxc"

missing=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $PKGS 2>/dev/null |
	awk '$2 == "ii" { print $1 }' | sort >/tmp/.criu-like-have.$$ ;
	for p in $PKGS; do grep -qx "$p" /tmp/.criu-like-have.$$ || echo "$p"; done;
	rm -f /tmp/.criu-like-have.$$)

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: $missing (run as root to install them)" >&2
	exit 1
fi

echo "install-deps: installing:" $missing
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
