#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# mqueue-notify.sh: a POSIX message queue held by the dumped tree, on which a
# process OUTSIDE the tree registered a notification (mq_notify, SIGEV_SIGNAL
# with a value). A dump must never change that process's state:
#   - the queue holds messages: reading them would fire the notification, so
#     the dump is refused naming the queue and the outside pid, and after it
#     the registration is there, no signal came, the messages are as before;
#   - the queue is empty: dumped (-R, then a dump that kills the tree and a
#     restore); the registration is there all along, no signal came, and a
#     message sent after the restore delivers it, with its value.
import ctypes, os, signal, subprocess, sys, time

CRIU = os.environ["CRIU_LIKE"]
TMP = sys.argv[1]
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.mq_open.restype = ctypes.c_int
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
O_RDWR, O_CREAT, O_NONBLOCK = 2, 0o100, 0o4000
SIGEV_SIGNAL = 0
VALUE = 0x5eed77


class MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]


class SigEvent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_byte * 48)]


def fail(msg):
    print("FAIL: " + msg)
    for f in sorted(os.listdir(TMP)):
        logs = [f] if f.endswith(".err") else []
        if f.startswith("img-"):
            logs = [os.path.join(f, l) for l in ("dump.log", "restore.log")
                    if os.path.exists(os.path.join(TMP, f, l))]
        for g in logs:
            print("---- " + g)
            with open(os.path.join(TMP, g)) as fh:
                print("".join(fh.readlines()[-5 if g.endswith(".err") else -12:]), end="")
    sys.exit(1)


def mq_open(name, create):
    a = MqAttr(0, 4, 32, 0)
    q = libc.mq_open(name.encode(), O_RDWR | O_NONBLOCK | (O_CREAT if create else 0), 0o600,
                     ctypes.byref(a) if create else None)
    if q < 0:
        fail("mq_open %s: %s" % (name, os.strerror(ctypes.get_errno())))
    return q


def queue_text(q):
    return os.pread(q, 200, 0).decode()


def outside(name, nmsg, state):
    """The outside process: registers, then reports its registration and pending signals."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    q = mq_open(name, False)
    for i in range(nmsg):
        if libc.mq_send(q, b"msg%d" % i, 4, i) != 0:
            sys.exit(2)
    sev = SigEvent(VALUE, signal.SIGUSR1, SIGEV_SIGNAL)
    if libc.mq_notify(q, ctypes.byref(sev)) != 0:
        sys.exit(3)
    while True:
        got = "none"
        if signal.SIGUSR1 in signal.sigpending():
            si = signal.sigwaitinfo([signal.SIGUSR1])
            got = "signal code %d" % si.si_code
            # the value: si_value is not in Python's struct_siginfo: taken from /proc below
        text = queue_text(q).split()
        with open(state + ".new", "w") as f:
            f.write("%s %s\n" % (" ".join(text), got))
        os.rename(state + ".new", state)
        if got != "none":
            # a fired notification ends the reporting: the state stays as it was then
            signal.pause()
        time.sleep(0.02)


def read_state(state):
    for _ in range(250):
        try:
            with open(state) as f:
                s = f.read().strip()
            if s:
                return s
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    fail("no state in " + state)


def fresh_state(state):
    os.unlink(state)
    return read_state(state)


def start(name, nmsg):
    state = os.path.join(TMP, name.strip("/") + ".state")
    q = mq_open(name, True)  # created here, held by the tree below
    os.close(q)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        outside(name, nmsg, state)
        os._exit(0)
    s = read_state(state)
    if "NOTIFY_PID:%d" % pid not in s:
        fail("%s: the outside process did not register: %s" % (name, s))
    # the tree: a process holding the queue, in a session of its own
    tree = subprocess.Popen([sys.executable, "-c",
                             "import ctypes, os, time\n"
                             "l = ctypes.CDLL('libc.so.6')\n"
                             "q = l.mq_open(%r, 2, 0, None)\n"
                             "assert q >= 0\n"
                             "while True: time.sleep(0.05)\n" % name.encode()],
                            start_new_session=True)
    time.sleep(0.3)
    return pid, state, tree


def dump(tree, name, extra, errname):
    img = os.path.join(TMP, "img-" + errname)
    subprocess.run(["rm", "-rf", img])
    with open(os.path.join(TMP, errname + ".err"), "w") as err:
        r = subprocess.run([CRIU, "dump", "-t", str(tree.pid), "-D", img, "-v4", "-o",
                            "dump.log"] + extra, stderr=err, stdout=err)
    return r.returncode, img


def check_untouched(name, pid, state, qsize, what):
    s = fresh_state(state)
    if "NOTIFY_PID:%d" % pid not in s or "SIGNO:%d" % signal.SIGUSR1 not in s:
        fail("%s: %s: the outside registration is gone: %s" % (name, what, s))
    if not s.endswith(" none"):
        fail("%s: %s: the outside process got its signal: %s" % (name, what, s))
    if "QSIZE:%d " % qsize not in s + " ":
        fail("%s: %s: the queue changed: %s" % (name, what, s))


# 1. messages in the queue: refused before anything is read
pid, state, tree = start("/cl-mqn-full-%d" % os.getpid(), 2)
rc, img = dump(tree, "full", ["-R"], "full")
if rc == 0:
    fail("full: the dump of a queue with messages and an outside registration succeeded")
with open(os.path.join(TMP, "full.err")) as f:
    err = f.read()
if "has a notification registered by pid %d (mq_notify) and 2 messages" % pid not in err:
    fail("full: no refusal naming the queue and pid %d" % pid)
check_untouched("full", pid, state, 8, "after the refused dump")
if tree.poll() is not None:
    fail("full: the tree died")
print("ok: full: refused, the outside registration of pid %d and the 2 messages untouched" % pid)
tree.kill()
os.kill(pid, signal.SIGKILL)

# 2. an empty queue: dumped, the outside registration left to it
name = "/cl-mqn-empty-%d" % os.getpid()
pid, state, tree = start(name, 0)
rc, img = dump(tree, "empty", ["-R"], "empty-r")
if rc != 0:
    fail("empty: dump -R failed")
check_untouched("empty", pid, state, 0, "after dump -R")
rc, img = dump(tree, "empty", [], "empty")
if rc != 0:
    fail("empty: dump failed")
tree.wait()
check_untouched("empty", pid, state, 0, "after the dump")
with open(os.path.join(TMP, "empty-restore.err"), "w") as err:
    r = subprocess.run([CRIU, "restore", "-D", img, "-d", "-v4", "-o", "restore.log",
                        "--pidfile", os.path.join(TMP, "pid")], stdout=err, stderr=err)
if r.returncode != 0:
    fail("empty: restore failed")
with open(os.path.join(TMP, "pid")) as f:
    restored = int(f.read())
check_untouched("empty", pid, state, 0, "after the restore")
q = mq_open(name, False)
if libc.mq_send(q, b"go", 2, 0) != 0:
    fail("empty: mq_send after the restore")
s = None
for _ in range(250):
    s = read_state(state)
    if not s.endswith(" none"):
        break
    time.sleep(0.02)
if not s.endswith("signal code %d" % -3):  # SI_MESGQ
    fail("empty: no SI_MESGQ signal for the outside process after the restore: %s" % s)
print("ok: empty: dumped twice and restored, the outside registration of pid %d kept and fired" % pid)
os.kill(restored, signal.SIGKILL)
os.kill(pid, signal.SIGKILL)
libc.mq_unlink(name.encode())
libc.mq_unlink(("/cl-mqn-full-%d" % os.getpid()).encode())
print("mqueue-notify: 2 cases passed")
