#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# runc (Debian 12's 1.1.5) with criu-like as its CRIU (`runc --criu`): a
# busybox-static container with its own pid, mount, UTS, IPC and network
# namespaces, cgroups made by runc, a bind-mounted data directory, stdio on
# pipes, its hostname set by runc, a loop counting in /data/count. Checked:
#   - `runc checkpoint --leave-running`: the container goes on counting;
#   - `runc checkpoint`: the container is gone, the count stops;
#   - `runc restore -d`: runc reports it running, its init is pid 1 in its
#     pid namespace, its hostname is kept, the count goes on from where it
#     was (the first value it writes after the restore is the dumped one + 1);
#   - `runc checkpoint --tcp-established` and `runc restore --tcp-established`
#     of a second container, a TCP server on a network namespace of its own
#     (given to runc by path, with a veth to the host: runc sends it as an
#     external namespace) whose client runs outside: the same connection
#     carries the next request after the restore.
# Documentation/runtimes.md has the recipe; runc.inc the bundle, runc-lazy.sh the
# lazy migration.
set -u
NAME=runc
LOOP='n=0; while :; do n=$((n + 1)); echo "$n $(hostname)" >/data/count.new; '\
'mv /data/count.new /data/count; echo $n >>/data/log; sleep 0.02; done'
id=criu-like-test-$$
tid=criu-like-tcp-$$
ns=crl-runc-$$
hv=crlh$$
kid=criu-like-tty-$$
client=
recv=
cleanup() {
	[ -n "$client" ] && kill $client 2>/dev/null
	[ -n "$recv" ] && kill $recv 2>/dev/null
	runc delete -f $id >/dev/null 2>&1
	runc delete -f $kid >/dev/null 2>&1
	runc delete -f $tid >/dev/null 2>&1
	ip link del $hv 2>/dev/null
	ip netns del $ns 2>/dev/null
}
. "$(dirname "$0")/runc.inc"
state() { state_of "$id"; }

piped run runc run -d -b "$tmp/bundle" "$id" || fail "runc run -d"
wait_more 10 "start"

runc --criu "$CRIU_LIKE" checkpoint --leave-running --image-path "$tmp/img1" "$id" \
	>"$tmp/ckpt1.out" 2>&1 || fail "runc checkpoint --leave-running"
set -- $(state)
[ "${1:-}" = running ] || fail "after checkpoint --leave-running the container is '${1:-gone}'"
n=$(count)
wait_more "$n" "after checkpoint --leave-running"

runc --criu "$CRIU_LIKE" checkpoint --image-path "$tmp/img2" "$id" >"$tmp/ckpt2.out" 2>&1 ||
	fail "runc checkpoint"
c=$(count)
lines=$(wc -l <"$tmp/data/log")
old=$(tail -n1 "$tmp/data/log")
sleep 0.2
[ "$(count)" = "$c" ] && [ "$(wc -l <"$tmp/data/log")" = "$lines" ] ||
	fail "the count goes on after runc checkpoint ($c, $(count))"
[ -z "$(state)" ] || fail "the container is still there after runc checkpoint: $(state)"

piped restore runc --criu "$CRIU_LIKE" restore -d -b "$tmp/bundle" --image-path "$tmp/img2" \
	"$id" || fail "runc restore -d"
set -- $(state)
[ "${1:-}" = running ] || fail "after runc restore the container is '${1:-gone}'"
hp=$2
# the first value written after the restore follows the dumped one: not a loop started again
i=0
while [ "$(wc -l <"$tmp/data/log")" -le "$lines" ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "after restore: the loop does not count"; sleep 0.02
done
first=$(sed -n "$((lines + 1))p" "$tmp/data/log")
[ "$first" = $((old + 1)) ] || fail "the count started again: $old at the checkpoint, then $first"
wait_more "$first" "after restore"
nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$hp/status")
[ "$nspid" = 1 ] || fail "the restored init (host pid $hp) is pid '$nspid' in its namespace"
host=$(cut -d' ' -f2 "$tmp/data/count")
[ "$host" = runcbox ] || fail "the restored container's hostname is '$host'"
# its /proc is its own pid namespace's: pid 1 there is its init, not the host's
[ "$(stat -L -c %i /proc/$hp/root/proc/1/ns/pid)" = "$(stat -L -c %i /proc/$hp/ns/pid)" ] &&
	[ "$(stat -L -c %i /proc/$hp/ns/pid)" != "$(stat -L -c %i /proc/self/ns/pid)" ] ||
	fail "the restored container's /proc is not the one of its pid namespace"

runc delete -f "$id" >/dev/null 2>&1
echo "runc: checkpoint --leave-running, checkpoint and restore -d with criu-like:" \
	"$old at the checkpoint, $first after, pid 1 and hostname kept"

# ---- a container with a terminal: runc's console socket gets the new master at restore ----
# (CRIU's orphan_pts_master: a new pty pair, its master to runc through the RPC
# notification orphan-pts-master, the slave the shell's controlling terminal)
cp -a "$tmp/bundle" "$tmp/ttybundle"
python3 - "$tmp/ttybundle/config.json" <<'PY' || fail "cannot edit config.json"
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c['process']['terminal'] = True
# a counter on the terminal, and what is typed on it echoed back
c['process']['args'] = ['/bin/sh', '-c', 'n=0; while :; do n=$((n + 1)); echo "tick $n"; '
    'if read -t 0.1 l; then echo "got $l"; fi; done']
c['mounts'] = [m for m in c['mounts'] if m['destination'] != '/data']
json.dump(c, open(p, 'w'), indent=1)
PY
: >"$tmp/tty.in"
python3 "$(dirname "$0")/console-recv.py" "$tmp/console.sock" "$tmp/tty.out" "$tmp/tty.in" \
	>"$tmp/recv.out" 2>&1 &
recv=$!
i=0
until [ -S "$tmp/console.sock" ]; do
	i=$((i + 1)); [ $i -gt 250 ] && fail "the console receiver does not listen"; sleep 0.02
done
last_tick_tty() { grep -a -o 'tick [0-9]*' "$tmp/tty.out" | tail -1 | cut -d' ' -f2; }
wait_tty() { # wait_tty PATTERN WHAT
	i=0
	until grep -a -q "$1" "$tmp/tty.out" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 500 ] && fail "tty: $2: no '$1' on the terminal"; sleep 0.02
	done
}
piped ttyrun runc run -d --console-socket "$tmp/console.sock" -b "$tmp/ttybundle" "$kid" ||
	fail "runc run -d with a terminal"
wait_tty "master 1" "runc run"
wait_tty "tick 5" "before the checkpoint"
echo hello >>"$tmp/tty.in"
wait_tty "got hello" "before the checkpoint"
# settings of the terminal, which the new one must have: a window size, no echo
set -- $(state_of "$kid")
stty -F "/proc/$2/fd/0" rows 42 cols 123 -echo || fail "tty: cannot set the terminal's settings"
runc --criu "$CRIU_LIKE" checkpoint --shell-job --image-path "$tmp/imgk" "$kid" \
	>"$tmp/ckptk.out" 2>&1 || { kill $recv; fail "runc checkpoint --shell-job of a terminal"; }
[ -z "$(state_of "$kid")" ] || fail "tty: the container is still there after the checkpoint"
ticked=$(last_tick_tty)
piped ttyrst runc --criu "$CRIU_LIKE" restore -d --shell-job --console-socket "$tmp/console.sock" \
	-b "$tmp/ttybundle" --image-path "$tmp/imgk" "$kid" ||
	{ kill $recv; fail "runc restore --shell-job --console-socket"; }
wait_tty "master 2" "runc restore (the new master)"
# the counter goes on on the new terminal, from where it was
i=0
while ! sed -n '/^master 2/,$p' "$tmp/tty.out" | grep -a -q "tick $((ticked + 2))"; do
	i=$((i + 1))
	[ $i -gt 500 ] && { kill $recv; fail "tty: no tick after $ticked on the new master"; }
	sleep 0.02
done
sed -n '/^master 2/,$p' "$tmp/tty.out" | grep -a -q "tick 1$(printf '\r')\?$" &&
	{ kill $recv; fail "tty: the counter started again on the new master"; }
echo again >>"$tmp/tty.in"
wait_tty "got again" "after the restore (typing on the new master)"
set -- $(state_of "$kid")
[ "${1:-}" = running ] || fail "tty: after the restore the container is '${1:-gone}'"
# the shell's controlling terminal is the new pty again (tty_nr of its stat)
ttynr=$(cut -d')' -f2 "/proc/$2/stat" | awk '{ print $5 }')
[ "${ttynr:-0}" != 0 ] || { kill $recv; fail "tty: the restored shell has no controlling terminal"; }
[ "$(stty -F "/proc/$2/fd/0" size)" = "42 123" ] ||
	{ kill $recv; fail "tty: the new terminal's size is '$(stty -F "/proc/$2/fd/0" size)'"; }
stty -F "/proc/$2/fd/0" -a | grep -q -- "-echo " ||
	{ kill $recv; fail "tty: the new terminal echoes (its termios were not restored)"; }
# its /dev/console (runc's bind of the terminal) is the new terminal too, and alive
[ "$(stat -L -c %t:%T "/proc/$2/fd/0")" = "$(stat -c %t:%T "/proc/$2/root/dev/console")" ] ||
	{ kill $recv; fail "tty: /dev/console is not the shell's new terminal"; }
echo console >"/proc/$2/root/dev/console" ||
	{ kill $recv; fail "tty: /dev/console of the restored container cannot be written"; }
wait_tty "^console" "after the restore (writing to /dev/console)"
kill $recv
recv=
runc delete -f "$kid" >/dev/null 2>&1
echo "runc: a container with a terminal: checkpoint --shell-job, restore --console-socket:" \
	"tick $ticked at the checkpoint, the counter and the input going on on the new master"

# ---- --tcp-established: a server in the container, its client outside ----
command -v ip >/dev/null || { echo "runc: no ip(8), --tcp-established not tested"; exit 0; }
sub=$(($$ % 200 + 20))
ip netns add $ns || fail "ip netns add"
ip link add $hv type veth peer name crlc$$ && ip link set crlc$$ netns $ns &&
	ip addr add 10.251.$sub.1/30 dev $hv && ip link set $hv up &&
	ip -n $ns addr add 10.251.$sub.2/30 dev crlc$$ && ip -n $ns link set crlc$$ up &&
	ip -n $ns link set lo up || fail "cannot make the container's veth"
cp -a "$tmp/bundle" "$tmp/tcpbundle"
python3 - "$tmp/tcpbundle/config.json" "$ns" <<'PY' || fail "cannot edit config.json"
import json, sys
p, ns = sys.argv[1], sys.argv[2]
c = json.load(open(p))
c['process']['args'] = ['/bin/nc', '-l', '-p', '5000', '-e', '/bin/sh', '-c',
    'n=0; while read -r l; do n=$((n + 1)); echo "$n $l"; done']
c['mounts'] = [m for m in c['mounts'] if m['destination'] != '/data']
for n in c['linux']['namespaces']:
    if n['type'] == 'network':
        n['path'] = '/var/run/netns/' + ns
json.dump(c, open(p, 'w'), indent=1)
PY
piped tcprun runc run -d -b "$tmp/tcpbundle" "$tid" || fail "runc run -d (tcp)"
: >"$tmp/cmd"
: >"$tmp/replies"
python3 - "10.251.$sub.2" "$tmp/cmd" "$tmp/replies" >"$tmp/client.out" 2>&1 <<'PY' &
# one connection; each line appended to CMD is sent, its reply appended to REPLIES
import socket, sys, time
for i in range(100):
    try:
        s = socket.create_connection((sys.argv[1], 5000), timeout=2)
        break
    except OSError:
        time.sleep(0.05)
s.settimeout(60)
f = s.makefile('rw')
done = 0
while True:
    lines = open(sys.argv[2]).read().splitlines()
    for cmd in lines[done:]:
        f.write(cmd + '\n')
        f.flush()
        r = f.readline()
        open(sys.argv[3], 'a').write(r if r else 'EOF\n')
        if not r:
            sys.exit(1)
    done = len(lines)
    time.sleep(0.05)
PY
client=$!
reply() { # reply N: wait for the N-th reply
	i=0
	while [ "$(wc -l <"$tmp/replies" 2>/dev/null || echo 0)" -lt "$1" ]; do
		i=$((i + 1)); [ $i -gt 1200 ] && fail "tcp: no reply $1 from the server"
		kill -0 "$client" 2>/dev/null || fail "tcp: the client is gone: $(cat "$tmp/client.out")"
		sleep 0.05
	done
	sed -n "$1p" "$tmp/replies"
}
echo one >>"$tmp/cmd"
[ "$(reply 1)" = "1 one" ] || fail "tcp: before: '$(reply 1)'"
sport=$(ss -tnH state established "( dport = :5000 )" | awk '{ print $3 }' | head -1)
[ -n "$sport" ] || fail "tcp: no connection to 10.251.$sub.2:5000 in the host"
runc --criu "$CRIU_LIKE" checkpoint --tcp-established --image-path "$tmp/imgt" "$tid" \
	>"$tmp/ckptt.out" 2>&1 || fail "runc checkpoint --tcp-established"
[ -z "$(state_of "$tid")" ] || fail "tcp: the container is still there after the checkpoint"
piped tcprst runc --criu "$CRIU_LIKE" restore -d --tcp-established -b "$tmp/tcpbundle" \
	--image-path "$tmp/imgt" "$tid" || fail "runc restore --tcp-established"
set -- $(state_of "$tid")
[ "${1:-}" = running ] || fail "tcp: after the restore the container is '${1:-gone}'"
echo two >>"$tmp/cmd"
[ "$(reply 2)" = "2 two" ] || fail "tcp: after the restore the reply is '$(reply 2)'"
[ "$(ss -tnH state established "( dport = :5000 )" | awk '{ print $3 }' | head -1)" = "$sport" ] ||
	fail "tcp: the client's connection is not the one from before ($sport)"
kill $client
client=
runc delete -f "$tid" >/dev/null 2>&1
echo "runc: checkpoint/restore --tcp-established: the client at $sport kept its connection:" \
	"'$(reply 1)', then '$(reply 2)'"
