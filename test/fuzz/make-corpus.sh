#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Make the seed corpus of the fuzz harnesses from real dumps: dump a few zdtm
# test programs (pipe data, shared anonymous memory, a deleted file: between
# them every image kind), then copy each image of at most MAX bytes into
# test/fuzz/corpus/image/KIND/, its JSON (decode --pages) into
# test/fuzz/corpus/json/. Pages images of the dumps are larger than MAX: one
# small pages image is made with `encode`. The corpus is committed; run this
# again (as root, after make) when the image format changes.
#
#   [B=build] sh test/fuzz/make-corpus.sh
set -eu
: "${B:=build}"
CL=$(realpath "$B/criu-like")
MAX=${MAX:-16384}
OUT=test/fuzz/corpus
TESTS="pipe_data shm_anon mmap_deleted_file"
[ "$(id -u)" = 0 ] || { echo "make-corpus: needs root (dump)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$OUT/image" "$OUT/json"
mkdir -p "$OUT/image" "$OUT/json"

for t in $TESTS; do
	"$B/test/zdtm/static/$t" --pidfile="$tmp/$t.pid" --outfile="$tmp/$t.out"
	pid=$(cat "$tmp/$t.pid")
	"$CL" dump -t "$pid" -D "$tmp/$t" --network-lock skip
	for f in "$tmp/$t"/*.img "$tmp/$t"/stats-dump; do
		# the kind: the file name without its id and .img (core-42.img: core)
		kind=$(basename "$f" .img | sed 's/-[0-9]*$//')
		[ "$(stat -c %s "$f")" -le "$MAX" ] || continue
		mkdir -p "$OUT/image/$kind"
		cp "$f" "$OUT/image/$kind/$t-$(basename "$f")"
		"$CL" decode --pages "$f" -O "$OUT/json/$t-$(basename "$f" .img).json"
	done
done

# Kinds no small dump image gave: made with encode (raw kinds from their
# JSON, stats-restore from a record of its own).
craft() { # KIND MAGIC JSON-REST
	printf '{"kind": "%s", "magic": "0x%08x", "version": 1, "flags": 0, %s}\n' "$1" "$2" "$3" \
		>"$OUT/json/small-$1.json"
	mkdir -p "$OUT/image/$1"
	"$CL" encode "$OUT/json/small-$1.json" -O "$OUT/image/$1/small-$1.img"
}
[ -d "$OUT/image/pages" ] || craft pages 0xE545E4EF '"size": 16, "data": "0123456789abcdef"'
[ -d "$OUT/image/ghost" ] || craft ghost 0x212402D9 '"size": 6, "data": "ghost\n"'
[ -d "$OUT/image/stats-restore" ] || craft stats-restore 0xE569C17F '"records": [{"restore": {
	"pages_compared": 0, "pages_skipped_cow": 0, "forking_time": 7470, "restore_time": 20728,
	"pages_restored": 27}}]'

# Command lines for fuzz-cli: argv[1..], NUL-separated.
rm -rf "$OUT/cli"
mkdir -p "$OUT/cli"
n=0
while read -r line; do
	n=$((n + 1))
	printf '%s' "$line" | tr ' ' '\000' >"$OUT/cli/argv-$n"
done <<'ARGS'
dump -t 1234 -D /tmp/img -R -o dump.log -v4 --timeout 30
dump --tree=42 --images-dir=d --leave-running --shell-job --tcp-established --ext-unix-sk --file-locks --network-lock skip
restore -D d -d --pidfile p -j --timeout 60 --network-lock iptables
restore --lazy-pages -D d
check --all --json
decode d --pages -O out.json
encode in.json -O out.img
net-lock keep 127.0.0.1:1,127.0.0.1:2 --network-lock nftables
infect-test -t 1 --cycles 3 --freeze-cgroup /sys/fs/cgroup/x
-vvv --help
--version
dump --external a --external b --inherit-fd fd[1]:x --manage-cgroups=full
ARGS

echo "make-corpus: $(find "$OUT/image" -type f | wc -l) images of" \
	"$(ls "$OUT/image" | wc -l) kinds, $(find "$OUT/json" -type f | wc -l) JSON files, $n command lines," \
	"$(($(cat $(find "$OUT" -type f) | wc -c) / 1024)) KiB"
