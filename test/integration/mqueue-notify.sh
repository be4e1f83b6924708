#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A POSIX message queue of the tree with a notification registered by a
# process outside it: refused while the queue holds messages (reading them
# would fire it), dumped and restored when it is empty, the outside
# process's registration and signals untouched (mqueue-notify.py).
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "mqueue-notify: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "mqueue-notify: build first ($CRIU_LIKE)"; exit 1; }
command -v python3 >/dev/null || { echo "mqueue-notify: python3 is not installed"; exit 77; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")
export CRIU_LIKE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/mqueue-notify.py" "$tmp"
