#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo`: show criu-like working on a running program.
# What it shows follows what works today (README, "What works today").
set -eu
B=${B:-build}
TOOL=$B/criu-like
DIR=$(mktemp -d /tmp/criu-like-demo.XXXXXX)
pid=

cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

cc -O2 -o "$DIR/counter" scripts/demo/counter.c

step "1. What this kernel offers (criu-like check)"
"$TOOL" check || true

step "2. A program that counts and keeps state in memory"
"$DIR/counter" >"$DIR/counter.out" 2>&1 &
pid=$!
sleep 3
tail -n 2 "$DIR/counter.out"

step "3. Freeze it, run the parasite inside it 50 times, cure it (criu-like infect-test)"
"$TOOL" infect-test -t "$pid" --cycles 50
sleep 2

step "4. It goes on counting as if nothing happened"
tail -n 3 "$DIR/counter.out"
kill -0 "$pid"
echo "pid $pid still running"

step "Dump and restore are the next steps of the project (see README)."
