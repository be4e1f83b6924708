#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run the libFuzzer harnesses built by `make fuzz-build` into $B/fuzz, each
# for SECONDS (default 5) from its seed corpus (test/fuzz/corpus/). New
# inputs go to a scratch corpus (FUZZ_CORPUS_OUT=DIR keeps them, one folder
# per harness); a crash, a sanitizer report, a leak or a timeout fails the
# harness and leaves the input in $B/fuzz/artifacts/. Exit 0 when every
# harness ran clean, 1 when one failed, 77 when the harnesses are not built.
#
#   [B=build] sh test/fuzz/run.sh [SECONDS [HARNESS...]]   e.g. 600 image decode
set -u
: "${B:=build}"
SECONDS_EACH=${1:-5}
[ $# -gt 0 ] && shift
HARNESSES=${*:-"image decode encode cli rpc"}
C=test/fuzz/corpus
ART=$B/fuzz/artifacts
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

seeds() {
	case $1 in
	image | decode) echo "$C"/image/* ;;
	encode) echo "$C/json" ;;
	cli) echo "$C/cli" ;;
	rpc) echo "$C/rpc" ;;
	esac
}

mkdir -p "$ART"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# the harnesses' own scratch files go there too (fuzz_scratch_dir())
export FUZZ_SCRATCH="$scratch"
fail=0
for h in $HARNESSES; do
	bin=$B/fuzz/fuzz-$h
	if ! [ -x "$bin" ]; then
		echo "fuzz: $bin is not built (make fuzz-build B=$B)"
		exit 77
	fi
	out=${FUZZ_CORPUS_OUT:+$FUZZ_CORPUS_OUT/$h}
	out=${out:-$scratch/$h}
	mkdir -p "$out"
	log=$scratch/$h.log
	# shellcheck disable=SC2046
	"$bin" -max_total_time="$SECONDS_EACH" -timeout=25 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$ART/fuzz-$h-" "$out" $(seeds "$h") \
		>"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	if [ "$rc" = 0 ]; then
		echo "fuzz-$h: ${runs:-?} executions in ${SECONDS_EACH}s, $cov, no crash"
	else
		echo "fuzz-$h: FAILED (exit status $rc) after ${runs:-?} executions:"
		grep -E -A30 '^==[0-9]+==ERROR|runtime error|^SUMMARY|Test unit written' "$log" |
			head -n 60 | sed 's/^/    | /'
		fail=1
	fi
done
exit "$fail"
