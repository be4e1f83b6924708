#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# CRIU's configuration files with the real command line (Documentation/config.md):
#   1. ~/.criu/default.conf gives a dump its log file (a quoted path with a
#      space), its verbosity ("verbosity 4") and --network-lock skip
#   2. CRIU_CONFIG_FILE wins over it, --config over that, -o over every file
#   3. --no-default-config and --config leave ~/.criu/default.conf out
#   4. an option a file gives whose feature is missing is refused by name with
#      the file and line, in the log file too, and the tree runs on untouched
#   5. an unknown option in a file is refused with the file and line
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
[ "$(id -u)" = 0 ] || { echo "config-file: needs root"; exit 77; }
[ -x "$CRIU_LIKE" ] || { echo "config-file: build first"; exit 1; }
CRIU_LIKE=$(realpath "$CRIU_LIKE")

tmp=$(mktemp -d)
vp=
cleanup() {
	[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
unset CRIU_CONFIG_FILE
export HOME="$tmp/home"
mkdir -p "$HOME/.criu" "$tmp/log dir"
cat >"$HOME/.criu/default.conf" <<EOC
# what a CRIU user keeps in ~/.criu/default.conf

log-file "$tmp/log dir/home.log"   # a quoted path
verbosity 4
network-lock skip
EOC

setsid sleep 1000 </dev/null >/dev/null 2>&1 &
vp=$!

# 1. -R: the tree goes on, for the next steps
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img1" -R || fail "dump with ~/.criu/default.conf"
[ -s "$tmp/log dir/home.log" ] || fail "no log file from ~/.criu/default.conf"
grep -q "dump of $vp complete" "$tmp/log dir/home.log" || fail "verbosity 4 not applied"

# 2. CRIU_CONFIG_FILE, then --config, then the command line
echo "log-file $tmp/env.log" >"$tmp/env.conf"
echo "log-file=$tmp/cfg.log" >"$tmp/cfg.conf"
CRIU_CONFIG_FILE=$tmp/env.conf "$CRIU_LIKE" dump -t "$vp" -D "$tmp/img2" -R ||
	fail "dump with CRIU_CONFIG_FILE"
[ -s "$tmp/env.log" ] || fail "CRIU_CONFIG_FILE's log-file not used"
# --config also turns ~/.criu/default.conf off: the network lock must come from here
echo "network-lock skip" >>"$tmp/cfg.conf"
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img3" -R --config "$tmp/cfg.conf" -v4 ||
	fail "dump with --config"
[ -s "$tmp/cfg.log" ] || fail "--config's log-file not used"
grep -q "dump of $vp complete" "$tmp/log dir/home.log" && [ "$(grep -c "dump of $vp complete" \
	"$tmp/log dir/home.log")" -ne 1 ] && fail "--config read ~/.criu/default.conf too"
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img4" -R --config="$tmp/cfg.conf" -o "$tmp/argv.log" -v4 ||
	fail "dump with --config and -o"
[ -s "$tmp/argv.log" ] || fail "-o did not win over the configuration file"
[ "$(grep -c "dump of $vp complete" "$tmp/cfg.log")" -eq 1 ] || fail "-o and the file both logged"

# 3. --no-default-config
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img5" -R --no-default-config --network-lock skip \
	-o "$tmp/nodef.log" || fail "dump with --no-default-config"
[ "$(grep -c "dump of $vp complete" "$tmp/log dir/home.log")" -eq 1 ] ||
	fail "--no-default-config read ~/.criu/default.conf"

# 4. a missing feature, refused with its file and line, in the log file too
printf 'network-lock skip\n\n# unlinked files\nlink-remap\n' >"$tmp/refused.conf"
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img6" --config "$tmp/refused.conf" -o "$tmp/refused.log" \
	2>"$tmp/refused.err" && fail "a refused option in a configuration file was accepted"
msg="$tmp/refused.conf:4: option --link-remap: link remaps"
grep -q "$msg" "$tmp/refused.err" || { cat "$tmp/refused.err"; fail "refusal without file:line"; }
grep -q "$msg" "$tmp/refused.log" || fail "refusal not in the log file"
[ ! -e "$tmp/img6/inventory.img" ] || fail "the refused dump wrote images"
st=$(awk '/^State:/ { print $2 } /^TracerPid:/ { print $2 }' /proc/$vp/status | tr '\n' ' ')
[ "$st" = "S 0 " ] || fail "the tree is not running free after the refusal ($st)"
# the command line overrides it: nothing left to refuse
"$CRIU_LIKE" dump -t "$vp" -D "$tmp/img7" -R --config "$tmp/refused.conf" \
	--no-link-remap || fail "the command line did not override the file"

# 5. an unknown option
printf 'network-lock skip\ntcp-establish3d\n' >"$tmp/bad.conf"
"$CRIU_LIKE" check --config "$tmp/bad.conf" >/dev/null 2>"$tmp/bad.err" &&
	fail "an unknown option in a configuration file was accepted"
grep -q "$tmp/bad.conf:2: option '--tcp-establish3d' refused" "$tmp/bad.err" ||
	{ cat "$tmp/bad.err"; fail "unknown option without file:line"; }
echo "config-file: ok"
