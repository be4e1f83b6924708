# SPDX-License-Identifier: GPL-2.0
# Helper of dump-proc.sh: compare the decoded images of a dump (IMG/*.json)
# with the /proc files saved just before it (PROC/). Usage: PID PROC IMG.
# Prints each mismatch; exits 1 if there is any.
import json
import os
import sys

pid, procdir, imgdir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
bad = []
checked = 0


def proc(name):
    with open(os.path.join(procdir, name), 'rb') as f:
        return f.read()


def img(name):
    with open(os.path.join(imgdir, name + '.json')) as f:
        d = json.load(f)
    if 'error' in d:
        bad.append(f'{name}: decode error {d["error"]}')
    return d['records']


def text(v):
    # decode prints bytes as text when printable, else "base64:..."
    return v if not v.startswith('base64:') else None


def eq(what, got, want):
    global checked
    checked += 1
    if got != want:
        bad.append(f'{what}: image {got!r}, /proc {want!r}')


def status(name='status'):
    d = {}
    for line in proc(name).decode().splitlines():
        k, _, v = line.partition(':')
        d[k] = v.strip()
    return d


def stat_fields(name='stat'):
    s = proc(name).decode()
    return [None, None, None] + s[s.rindex(')') + 2:].split()  # index = field number


st = status()
sf = stat_fields()
tasks = [int(t) for t in proc('tasks').split()]

# pstree
pe = img('pstree')[0]
eq('pstree pid', pe['pid'], pid)
eq('pstree pgid', pe['pgid'], int(sf[5]))
eq('pstree sid', pe['sid'], int(sf[6]))
eq('pstree threads', sorted(pe['threads']), sorted(tasks))
eq('pstree leader first', pe['threads'][0], pid)
eq('pstree state', pe['state'], 'TASK_ALIVE')
eq('pstree exit_signal', pe['exit_signal'], int(sf[38]))

# core: threads
core = img(f'core-{pid}')[0]
eq('core threads', sorted(t['tid'] for t in core['threads']), sorted(tasks))
for t in core['threads']:
    tid = t['tid']
    ts = status(f'status.{tid}')
    tf = stat_fields(f'stat.{tid}')
    eq(f'thread {tid} blocked', t['blocked'], int(ts['SigBlk'], 16))
    eq(f'thread {tid} comm', text(t['comm']), ts['Name'])
    eq(f'thread {tid} nice', t['sched_nice'], int(tf[19]))
    eq(f'thread {tid} rt priority', t['sched_prio'], int(tf[40]))
    eq(f'thread {tid} policy', t['sched_policy'], int(tf[41]))
    eq(f'thread {tid} stopped', t['stopped'], False)
    eq(f'thread {tid} pending (own queue)', len(t.get('pending', [])) > 0,
       int(ts['SigPnd'], 16) != 0)
    eq(f'thread {tid} has rseq (glibc registers it)', 'rseq' in t, True)
leader = next(t for t in core['threads'] if t['tid'] == pid)
eq('leader timer slack', leader['timer_slack_ns'], int(proc('timerslack_ns')))
eq('threads blocked masks differ', len({t['blocked'] for t in core['threads']}), len(tasks))

# core: process
tc = core['tc']
ign = cgt = 0
for i, sa in enumerate(tc['sigactions']):
    if sa['handler'] == 1:
        ign |= 1 << i
    elif sa['handler'] > 1:
        cgt |= 1 << i
eq('SigIgn', ign, int(st['SigIgn'], 16))
eq('SigCgt', cgt, int(st['SigCgt'], 16))
eq('personality', tc['personality'], int(proc('personality'), 16))
eq('seccomp', tc['seccomp_mode'], 'SECCOMP_DISABLED')
eq('oom_score_adj', tc['oom_score_adj'], int(proc('oom_score_adj')))
eq('loginuid', tc['loginuid'], int(proc('loginuid')))
eq('child_subreaper', tc['child_subreaper'], 1)  # the victim set it
eq('oom_score_adj is the victim\'s', tc['oom_score_adj'], 321)
eq('itimer real interval', (tc['itimer_real']['interval_sec'], tc['itimer_real']['interval_usec']),
   (5, 0))
remaining = tc['itimer_real']['value_sec']
eq('itimer real remaining in (0, 100]', 0 < remaining <= 100, True)
timers = {}
cur = None
for line in proc('timers').decode().splitlines():
    k, _, v = line.partition(':')
    v = v.strip()
    if k == 'ID':
        cur = timers.setdefault(int(v), {})
    elif k == 'signal':
        cur['signo'] = int(v.split('/')[0])
    elif k == 'ClockID':
        cur['clock'] = int(v)
got = {t['id']: {'signo': t['sigev_signo'], 'clock': t['clock_id']} for t in tc.get('posix_timers', [])}
eq('posix timers', got, timers)
limits = proc('limits').decode().splitlines()[1:]
inf = (1 << 64) - 1
want = []
for line in limits:
    cols = line[26:].split()
    val = [inf if c == 'unlimited' else int(c) for c in cols[:2]]
    want.append(tuple(val))
got = [(r['cur'], r['max']) for r in sorted(tc['rlimits'], key=lambda r: r['resource'])]
eq('rlimits', got, want)

# creds
cr = img(f'creds-{pid}')[0]
eq('uids', [cr['uid'], cr['euid'], cr['suid'], cr['fsuid']], [int(x) for x in st['Uid'].split()])
eq('gids', [cr['gid'], cr['egid'], cr['sgid'], cr['fsgid']], [int(x) for x in st['Gid'].split()])
eq('groups', sorted(cr.get('groups', [])), sorted(int(x) for x in st['Groups'].split()))
for k, f in (('cap_inh', 'CapInh'), ('cap_prm', 'CapPrm'), ('cap_eff', 'CapEff'),
             ('cap_bnd', 'CapBnd'), ('cap_amb', 'CapAmb')):
    eq(k, cr[k], int(st[f], 16))
eq('no_new_privs', cr['no_new_privs'], st['NoNewPrivs'] == '1')

# mm
mm = img(f'mm-{pid}')[0]
for k, n in (('start_code', 26), ('end_code', 27), ('start_stack', 28), ('start_data', 45),
             ('end_data', 46), ('start_brk', 47), ('arg_start', 48), ('arg_end', 49),
             ('env_start', 50), ('env_end', 51)):
    eq(f'mm {k}', mm[k], int(sf[n]))
raw = proc('auxv')
auxv = [int.from_bytes(raw[i:i + 8], 'little') for i in range(0, len(raw), 8)]
while auxv[-2:] == [0, 0]:
    auxv = auxv[:-2]
got = list(mm.get('auxv', []))
while got[-2:] == [0, 0]:
    got = got[:-2]
eq('auxv', got, auxv)
maps = []
for line in proc('maps').decode().splitlines():
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split('-'))
    prot = (1 if f[1][0] == 'r' else 0) | (2 if f[1][1] == 'w' else 0) | \
        (4 if f[1][2] == 'x' else 0)  # PROT_READ, PROT_WRITE, PROT_EXEC
    maps.append((lo, hi, prot, f[1][3] == 's', int(f[2], 16) if f[4] != '0' else 0))
got = [(v['start'], v['end'], v['prot'], bool(v['flags'] & 1), v['pgoff'] if 'file_id' in v else 0)
       for v in mm['vmas']]
eq('vmas', got, maps)

# fs
fs = img(f'fs-{pid}')[0]
eq('cwd', text(fs['cwd']), proc('cwd').decode().strip())
eq('root', text(fs['root']), proc('root').decode().strip())
eq('umask', fs['umask'], int(st['Umask'], 8))

# files
files = {f['id']: f for f in img('files')}
fdt = {e['fd']: e for e in img(f'fdinfo-{pid}')}
fds = sorted(int(x) for x in proc('fds').split())
eq('fd numbers', sorted(fdt), fds)
for fd in fds:
    if fd not in fdt:
        continue
    info = dict(line.split(':', 1) for line in proc(f'fdinfo.{fd}').decode().splitlines()
                if ':' in line)
    flags = int(info['flags'].strip(), 8)
    link = proc(f'fdlink.{fd}').decode().strip()
    e = fdt[fd]
    fe = files.get(e['id'])
    eq(f'fd {fd} cloexec', e['cloexec'], bool(flags & 0o2000000))
    if fe is None:
        bad.append(f'fd {fd}: file id {e["id"]} not in files.img')
        continue
    if link.startswith('pipe:'):
        eq(f'fd {fd} type', fe['type'], 'FILE_PIPE')
        eq(f'fd {fd} pipe ino', fe['pipe']['pipe_ino'], int(link[6:-1]))
    elif link.startswith('/dev/'):
        eq(f'fd {fd} type', fe['type'] in ('FILE_CHR', 'FILE_TTY', 'FILE_REG'), True)
    else:
        eq(f'fd {fd} type', fe['type'], 'FILE_REG')
        eq(f'fd {fd} path', text(fe['reg']['path']), link)
        eq(f'fd {fd} pos', fe['reg']['pos'], int(info['pos']))
        eq(f'fd {fd} flags', fe['reg']['flags'] & ~0o2000000, flags & ~0o2000000)

pipes = img('pipes-data')
eq('pipe data', [text(p['data']) for p in pipes if p['data']], ['in flight'])

for b in bad:
    print('FAIL: ' + b)
print(f'dump-proc: {checked} fields compared with /proc, {len(bad)} mismatches')
sys.exit(1 if bad else 0)
