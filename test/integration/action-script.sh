#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# --action-script: run at each hook point of a dump and a restore, in CRIU's
# order, with CRIU's environment (CRTOOLS_SCRIPT_ACTION, CRTOOLS_INIT_PID
# once the tree is known, CRTOOLS_IMAGE_DIR where the images are); a script
# failing at pre-dump or post-dump fails the dump and the tree goes on; one
# failing at post-restore fails the restore and kills what it created;
# network-lock and network-unlock around a tree with a network namespace of
# its own (a failing network-lock fails the dump, the tree goes on);
# status-ready once a page server or a lazy-pages daemon listens.
set -u
: "${B:=build}" "${CRIU_LIKE:=$B/criu-like}"
V=$B/test/integration/dump-victim
[ "$(id -u)" = 0 ] || { echo "action-script: needs root"; exit 77; }
[ -x "$V" ] && [ -x "$CRIU_LIKE" ] || { echo "action-script: build first"; exit 1; }

tmp=$(mktemp -d)
vp=
trap '[ -n "$vp" ] && kill -KILL "$vp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	[ -s "$tmp/log" ] && { echo "---- log"; tail -8 "$tmp/log"; }
	[ -s "$tmp/act" ] && { echo "---- actions"; cat "$tmp/act"; }
	exit 1
}
last_tick() { grep '^tick' "$tmp/v" | tail -1 | cut -d' ' -f2; }
ticks_past() {
	n=0
	while [ "$(last_tick)" -le "$1" ]; do
		n=$((n + 1))
		[ $n -le 200 ] || return 1
		sleep 0.05
	done
}
intact() {
	st=$(awk '/^State:/ { print $2 } /^TracerPid:/ { print $2 }' /proc/$vp/status | tr '\n' ' ')
	case "$st" in
	"S 0 " | "R 0 ") ;;
	*) fail "$1: pid $vp is not running free (state/tracer: $st)" ;;
	esac
	ticks_past "$(last_tick)" || fail "$1: the victim stopped ticking"
}

# the script: one line per call; FAIL_AT=ACTION makes it fail there
cat >"$tmp/script" <<'EOS'
#!/bin/sh
[ -e "$CRTOOLS_IMAGE_DIR/inventory.img" ] && inv=inv || inv=noinv
echo "$CRTOOLS_SCRIPT_ACTION ${CRTOOLS_INIT_PID:-none} $inv" >>"$ACT_OUT"
[ "$CRTOOLS_SCRIPT_ACTION" != "${FAIL_AT:-}" ]
EOS
chmod +x "$tmp/script"
export ACT_OUT="$tmp/act"

setsid "$V" mem 4 >"$tmp/v" 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' "$tmp/v" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || fail "victim did not start"
	sleep 0.01
done

# failing hooks of a dump: the tree goes on, the directory is no checkpoint
for at in pre-dump post-dump; do
	mkdir "$tmp/f-$at"
	FAIL_AT=$at "$CRIU_LIKE" dump -t $vp -D "$tmp/f-$at" --action-script "$tmp/script" \
		>"$tmp/log" 2>&1 && fail "dump succeeded with the script failing at $at"
	grep -q "action script .* failed at $at: exit status 1" "$tmp/log" ||
		fail "no message naming the failed $at script"
	intact "after the script failed at $at"
	"$CRIU_LIKE" check-images "$tmp/f-$at" >/dev/null 2>&1 &&
		fail "a dump failed at $at left a complete checkpoint"
done
rm -f "$tmp/act"

"$CRIU_LIKE" dump -t $vp -D "$tmp/img" --action-script "$tmp/script" >"$tmp/log" 2>&1 ||
	fail "dump failed"
[ "$(cat "$tmp/act" | tr '\n' ' ')" = "pre-dump $vp noinv post-dump $vp inv " ] ||
	fail "dump hooks: $(cat "$tmp/act" | tr '\n' ' ')"
wait $vp 2>/dev/null
dumped=$(last_tick)

# a restore failing at post-restore kills what it created; the pid is free again
rm -f "$tmp/act"
FAIL_AT=post-restore "$CRIU_LIKE" restore -d -D "$tmp/img" --action-script "$tmp/script" \
	>"$tmp/log" 2>&1 && fail "restore succeeded with the script failing at post-restore"
[ -e /proc/$vp ] && fail "pid $vp lives on after the failed restore"

rm -f "$tmp/act"
"$CRIU_LIKE" restore -d -D "$tmp/img" --action-script "$tmp/script" >"$tmp/log" 2>&1 ||
	fail "restore failed"
order=$(cut -d' ' -f1,2 "$tmp/act" | tr '\n' ' ')
[ "$order" = "pre-restore none setup-namespaces $vp post-setup-namespaces $vp post-restore $vp pre-resume $vp post-resume $vp " ] ||
	fail "restore hooks: $order"
ticks_past "$dumped" || fail "the restored victim does not tick"
[ "$(grep -c '^tick 1 ' "$tmp/v")" = 1 ] || fail "the counter started again from 1"

# status-ready: a page server and a lazy-pages daemon, once they listen
rm -f "$tmp/act"
mkdir "$tmp/ps"
"$CRIU_LIKE" page-server -D "$tmp/ps" --address 127.0.0.1 --port 0 --action-script "$tmp/script" \
	>"$tmp/pslog" 2>&1 &
psp=$!
n=0
until grep -q status-ready "$tmp/act" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 500 ] || fail "no status-ready from the page server: $(cat "$tmp/pslog")"
	sleep 0.01
done
kill $psp
wait $psp 2>/dev/null
[ "$(cat "$tmp/act")" = "status-ready none noinv" ] || fail "page server hooks: $(cat "$tmp/act")"
rm -f "$tmp/act"
"$CRIU_LIKE" lazy-pages -D "$tmp/img" --timeout 1 --action-script "$tmp/script" >"$tmp/lzlog" 2>&1
[ "$(cut -d' ' -f1 "$tmp/act")" = "status-ready" ] || fail "lazy-pages hooks: $(cat "$tmp/act")"

# network-lock and network-unlock: a tree with a network namespace of its own
kill -KILL $vp
wait $vp 2>/dev/null
setsid unshare -n "$V" mem 4 >"$tmp/v" 2>&1 </dev/null &
vp=$!
n=0
until grep -q '^ready' "$tmp/v" 2>/dev/null; do
	n=$((n + 1))
	[ $n -le 1000 ] || fail "netns victim did not start"
	sleep 0.01
done
rm -f "$tmp/act"
mkdir "$tmp/nf"
FAIL_AT=network-lock "$CRIU_LIKE" dump -t $vp -D "$tmp/nf" --action-script "$tmp/script" \
	>"$tmp/log" 2>&1 && fail "dump succeeded with the script failing at network-lock"
[ "$(cut -d' ' -f1,2 "$tmp/act" | tr '\n' ' ')" = "pre-dump $vp network-lock $vp " ] ||
	fail "failed network-lock hooks: $(cat "$tmp/act" | tr '\n' ' ')"
intact "after the script failed at network-lock"
rm -f "$tmp/act"
"$CRIU_LIKE" dump -t $vp -D "$tmp/nr" -R --action-script "$tmp/script" >"$tmp/log" 2>&1 ||
	fail "dump -R of the netns tree"
[ "$(cut -d' ' -f1 "$tmp/act" | tr '\n' ' ')" = "pre-dump network-lock post-dump network-unlock " ] ||
	fail "dump -R hooks: $(cat "$tmp/act" | tr '\n' ' ')"
intact "after dump -R"
rm -f "$tmp/act"
"$CRIU_LIKE" dump -t $vp -D "$tmp/nd" --action-script "$tmp/script" >"$tmp/log" 2>&1 ||
	fail "dump of the netns tree"
[ "$(cut -d' ' -f1 "$tmp/act" | tr '\n' ' ')" = "pre-dump network-lock post-dump " ] ||
	fail "dump hooks (netns): $(cat "$tmp/act" | tr '\n' ' ')"
wait $vp 2>/dev/null
dumped=$(last_tick)
rm -f "$tmp/act"
"$CRIU_LIKE" restore -d -D "$tmp/nd" --action-script "$tmp/script" >"$tmp/log" 2>&1 ||
	fail "restore of the netns tree"
order=$(cut -d' ' -f1 "$tmp/act" | tr '\n' ' ')
[ "$order" = "pre-restore setup-namespaces post-setup-namespaces post-restore pre-resume network-unlock post-resume " ] ||
	fail "restore hooks (netns): $order"
ticks_past "$dumped" || fail "the restored netns victim does not tick"
echo "action-script: ok"
