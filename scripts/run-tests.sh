#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run every test of criu-like and end with one line "N passed, N failed"
# (", N skipped" when some were): the cmocka unit tests (each test case
# counts), the zdtm suite in its default modes, the integration scripts, a
# short run of each fuzz harness (test/fuzz; FUZZ_SECONDS, default 5).
#
#   [B=build] sh scripts/run-tests.sh       from the repository root, as root
#
# Logs go to $B/test-logs/. Every command runs under `zdtm-run exec`, a child
# subreaper that kills whatever the command leaves behind, with a timeout.
# Integration scripts (test/integration/*.sh) get CRIU_LIKE and B in their
# environment; exit 0 is a pass, 77 a skip (the reason on the last line of
# output), anything else a failure.

set -u

B=${B:-build}
UNIT_TIMEOUT=300
ZDTM_TIMEOUT=1800
INTEG_TIMEOUT=300

if ! [ -d "$B" ]; then
	echo "run-tests: build directory $B does not exist (run make B=$B first)"
	exit 1
fi
B=$(cd "$B" && pwd)
ZDTM_RUN=$B/test/zdtm/zdtm-run
LOGS=$B/test-logs
CRIU_LIKE=$B/criu-like
export B CRIU_LIKE
# cmocka must print its plain summary lines, whatever the caller's environment says.
CMOCKA_MESSAGE_OUTPUT=stdout
export CMOCKA_MESSAGE_OUTPUT

passed=0
failed=0
skipped=0
skip_reasons=$(mktemp)
trap 'rm -f "$skip_reasons"' EXIT
child=
interrupted=0

# A signal to this script stops the running command (zdtm-run exec then kills
# its whole tree) and ends the run.
on_signal() {
	interrupted=1
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap on_signal INT TERM HUP

# run_guarded LOG TIMEOUT CMD...: run CMD under zdtm-run exec, output to LOG.
run_guarded() {
	_log=$1
	_timeout=$2
	shift 2
	"$ZDTM_RUN" exec --timeout "$_timeout" -- "$@" >"$_log" 2>&1 </dev/null &
	child=$!
	while :; do
		wait "$child"
		_rc=$?
		# A trapped signal interrupts wait; the command may still be running.
		kill -0 "$child" 2>/dev/null || break
	done
	child=
	return "$_rc"
}

show_tail() {
	echo "    ---- tail of $1 ----"
	tail -n "${2:-20}" "$1" | sed 's/^/    | /'
}

if ! [ -x "$ZDTM_RUN" ]; then
	echo "run-tests: $ZDTM_RUN is not built"
	echo "0 passed, 1 failed"
	exit 1
fi
rm -rf "$LOGS"
mkdir -p "$LOGS"

# ---- unit tests (cmocka) ------------------------------------------------------
echo "== unit tests ($B/test/unit)"
for bin in "$B"/test/unit/test-*; do
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	[ "$interrupted" = 0 ] || break
	name=${bin##*/}
	log=$LOGS/unit-$name.log
	run_guarded "$log" "$UNIT_TIMEOUT" "$bin"
	rc=$?
	# Sum every "[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s)" (one per group).
	set -- $(awk '/^\[  PASSED  \] [0-9]+ test\(s\)\./ { p += $4 }
		/^\[  FAILED  \] [0-9]+ test\(s\)/ { f += $4 }
		END { print p + 0, f + 0 }' "$log")
	p=$1
	f=$2
	note=
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# A crash or a timeout before cmocka could count: one failure.
		f=1
		note=" (exit status $rc)"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$f" -eq 0 ]; then
		printf '  PASS  unit/%-28s %d passed\n' "$name" "$p"
	else
		printf '  FAIL  unit/%-28s %d passed, %d failed%s\n' "$name" "$p" "$f" "$note"
		grep '^\[  FAILED  \] [^0-9]' "$log" | awk '!seen[$0]++' | sed 's/^/    /'
		show_tail "$log" 30
	fi
done

# ---- zdtm ---------------------------------------------------------------------
if [ "$interrupted" = 0 ]; then
	echo "== zdtm ($ZDTM_RUN)"
	log=$LOGS/zdtm.log
	run_guarded "$log" "$ZDTM_TIMEOUT" "$ZDTM_RUN" --keep-going --criu "$CRIU_LIKE"
	rc=$?
	# Its output, indented, so that the only closing line is ours.
	sed 's/^/  /' "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		set -- $(echo "$line" | tr -d ',')
		passed=$((passed + $1))
		failed=$((failed + $3))
		[ $# -ge 6 ] && skipped=$((skipped + $5))
		grep '^skipped ' "$log" | sed 's/^skipped /  zdtm /' >>"$skip_reasons"
		if [ "$rc" -ne 0 ] && [ "$3" -eq 0 ]; then
			echo "  FAIL  zdtm-run exited with status $rc"
			failed=$((failed + 1))
		fi
	else
		echo "  FAIL  zdtm-run ended without its summary (exit status $rc)"
		failed=$((failed + 1))
	fi
fi

# ---- integration scripts -------------------------------------------------------
echo "== integration tests (test/integration)"
for script in test/integration/*.sh; do
	[ -f "$script" ] || continue
	[ "$interrupted" = 0 ] || break
	name=${script##*/}
	name=${name%.sh}
	log=$LOGS/integration-$name.log
	start=$(date +%s)
	run_guarded "$log" "$INTEG_TIMEOUT" sh "$script"
	rc=$?
	secs=$(($(date +%s) - start))
	case $rc in
	0)
		passed=$((passed + 1))
		printf '  PASS  integration/%-24s %4ds\n' "$name" "$secs"
		;;
	77)
		skipped=$((skipped + 1))
		why=$(tail -n 1 "$log")
		printf '  SKIP  integration/%-24s %4ds  %s\n' "$name" "$secs" "$why"
		echo "  integration/$name: $why" >>"$skip_reasons"
		;;
	*)
		failed=$((failed + 1))
		printf '  FAIL  integration/%-24s %4ds  exit status %d\n' "$name" "$secs" "$rc"
		show_tail "$log" 30
		;;
	esac
done

# ---- fuzzing (libFuzzer) ---------------------------------------------------------
# Each harness of test/fuzz/ runs FUZZ_SECONDS (default 5) from its seed
# corpus; one test each, passed when nothing crashed. Built here (clang, into
# $B/fuzz) since `make all` does not; skipped when clang's libFuzzer is absent.
FUZZ_SECONDS=${FUZZ_SECONDS:-5}
if [ "$interrupted" = 0 ]; then
	echo "== fuzzing (test/fuzz, ${FUZZ_SECONDS}s each)"
	log=$LOGS/fuzz-build.log
	why=
	if ! command -v clang >/dev/null 2>&1; then
		why="clang is not installed"
	elif ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
		why="libFuzzer is not installed (libclang-rt-dev)"
	fi
	if [ -n "$why" ]; then
		skipped=$((skipped + 1))
		printf '  SKIP  fuzz  %s\n' "$why"
		echo "  fuzz: $why" >>"$skip_reasons"
	elif ! run_guarded "$log" 1200 make -j2 --no-print-directory B="$B" fuzz-build; then
		failed=$((failed + 1))
		echo "  FAIL  fuzz/build"
		show_tail "$log" 30
	else
		for h in test/fuzz/fuzz-*.c; do
			h=${h##*/fuzz-}
			h=${h%.c}
			[ "$h" = common ] && continue
			[ "$interrupted" = 0 ] || break
			log=$LOGS/fuzz-$h.log
			run_guarded "$log" $((FUZZ_SECONDS * 4 + 60)) sh test/fuzz/run.sh "$FUZZ_SECONDS" "$h"
			rc=$?
			if [ "$rc" = 0 ]; then
				passed=$((passed + 1))
				printf '  PASS  %s\n' "$(tail -n 1 "$log")"
			else
				failed=$((failed + 1))
				printf '  FAIL  fuzz/%-24s exit status %d\n' "$h" "$rc"
				show_tail "$log" 40
			fi
		done
	fi
fi

if [ "$interrupted" != 0 ]; then
	echo "run-tests: interrupted"
	failed=$((failed + 1))
fi
echo "logs: $LOGS"
if [ -s "$skip_reasons" ]; then
	echo "skipped:"
	cat "$skip_reasons"
fi
rm -f "$skip_reasons"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
