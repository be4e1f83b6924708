#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Live migration of a container (criu-like migrate --online) on the topology
# of scripts/migrate-topo.sh: refused by the destination, no destination,
# destination killed during the pre-copy (the source runs on, nothing left
# at B), then migrated A -> B with a client's TCP connection surviving and
# its counter going on. migrate.py does the work; the topology is removed
# at the end whatever happened.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "migrate: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "migrate: build first"; exit 1; }
PATH=$PATH:/usr/sbin:/sbin
for t in python3 unshare nsenter ip pivot_root; do
	command -v $t >/dev/null || { echo "migrate: $t is not installed"; exit 77; }
done
CRIU_LIKE=$(realpath "$CRIU_LIKE")
TOPO=$(realpath scripts/migrate-topo.sh)
export STATE=/run/criu-like-mig-test

tmp=$(mktemp -d)
cleanup() {
	[ -f "$tmp/pids" ] && for p in $(cat "$tmp/pids"); do kill -KILL "$p" 2>/dev/null; done
	"$TOPO" down
	[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
"$TOPO" down
"$TOPO" up --criu "$CRIU_LIKE" -v4 || { echo "FAIL: the topology did not come up"; exit 1; }
python3 -u test/integration/migrate.py "$CRIU_LIKE" "$tmp" "$TOPO"
