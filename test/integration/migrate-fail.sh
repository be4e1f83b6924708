#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The failures of a live migration that migrate.sh does not cover
# (Documentation/migration.md, "What happens on each failure"), on the
# topology of scripts/migrate-topo.sh: the restore failing at B (the veth's
# name taken there), the link between the hosts cut during the pre-copy,
# B's service killed after the final freeze, killed with the restored tree
# held before GO, and the final dump refusing a socket of the container that
# a process outside holds too. After each, exactly one copy runs: the source, its
# client's counter going on, nothing left at B. migrate.py ("fail") does the
# work; the topology is removed at the end whatever happened.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "migrate-fail: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "migrate-fail: build first"; exit 1; }
PATH=$PATH:/usr/sbin:/sbin
for t in python3 unshare nsenter ip pivot_root; do
	command -v $t >/dev/null || { echo "migrate-fail: $t is not installed"; exit 77; }
done
CRIU_LIKE=$(realpath "$CRIU_LIKE")
TOPO=$(realpath scripts/migrate-topo.sh)
export STATE=/run/criu-like-mig-fail

tmp=$(mktemp -d)
cleanup() {
	[ -f "$tmp/pids" ] && for p in $(cat "$tmp/pids"); do kill -KILL "$p" 2>/dev/null; done
	"$TOPO" down
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
"$TOPO" down
"$TOPO" up --criu "$CRIU_LIKE" -v4 || { echo "FAIL: the topology did not come up"; exit 1; }
python3 -u test/integration/migrate.py fail "$CRIU_LIKE" "$tmp" "$TOPO"
