// SPDX-License-Identifier: GPL-2.0
/*
 * core-PID.img (task state and every thread) and creds-PID.img of one
 * seized, infected task. Everything is read: nothing in the task changes.
 */
#define LOG_PREFIX "core: "

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asm/core-regs.h"
#include "compat.h"
#include "dump.h"
#include "image.h"
#include "infect.h"
#include "log.h"
#include "par.h"
#include "lsm.h"
#include "ns.h"
#include "seccomp.h"
#include "util.h"

#include "core.pb-c.h"
#include "creds.pb-c.h"

#define NR_SIGNALS 64
#define NR_RLIMITS 16 /* RLIMIT_CPU .. RLIMIT_RTTIME, the rows of /proc/PID/limits */
#define PEEK_BATCH 32

/* One signal queue: raw siginfo bytes and the entries pointing into them. */
struct sigqueue {
	size_t n;
	siginfo_t *raw;
	SiginfoEntry *e;
	SiginfoEntry **p;
};

struct thread_bufs {
	ThreadCoreEntry tc;
	UserRegsEntry regs;
	SigaltstackEntry sas;
	RseqEntry rseq;
	char comm[64];
	uint64_t cpu_mask[CPU_SETSIZE / 64];
	struct sigqueue q;
};

static void sigqueue_fini(struct sigqueue *q)
{
	free(q->raw);
	free(q->e);
	free(q->p);
}

/* Copy the queue of @tid (or the process-wide one with @shared) without dequeuing. */
static int peek_signals(pid_t pid, pid_t tid, bool shared, struct sigqueue *q)
{
	struct cr_ptrace_peeksiginfo_args a = {
		.flags = shared ? PTRACE_PEEKSIGINFO_SHARED : 0,
		.nr = PEEK_BATCH,
	};
	size_t i;
	long n;

	for (;;) {
		siginfo_t *r = realloc(q->raw, (q->n + PEEK_BATCH) * sizeof(*r));

		if (!r)
			return -ENOMEM;
		q->raw = r;
		a.off = q->n;
		n = ptrace(PTRACE_PEEKSIGINFO, tid, &a, q->raw + q->n);
		if (n < 0) {
			pr_perror("PTRACE_PEEKSIGINFO%s of %d/%d", shared ? " (shared)" : "", pid,
				  tid);
			return neg_errno();
		}
		q->n += (size_t)n;
		if (n < PEEK_BATCH)
			break;
	}
	if (!q->n)
		return 0;
	q->e = calloc(q->n, sizeof(*q->e));
	q->p = calloc(q->n, sizeof(*q->p));
	if (!q->e || !q->p)
		return -ENOMEM;
	for (i = 0; i < q->n; i++) {
		siginfo_entry__init(&q->e[i]);
		q->e[i].siginfo.data = (uint8_t *)&q->raw[i];
		q->e[i].siginfo.len = sizeof(siginfo_t);
		q->p[i] = &q->e[i];
	}
	return 0;
}

/*
 * The scheduling state, comm and robust list the parasite read in the thread
 * itself (parasite/parasite.c, thread_getters()): no /proc file, no syscall
 * by tid from here.
 */
static int thread_getters(pid_t pid, pid_t tid, const struct parasite_thread_state *st,
			  struct thread_bufs *b)
{
	ThreadCoreEntry *tc = &b->tc;
	size_t n;

	if (st->ret_sched) {
		pr_err("thread %d of %d: a sched getter in the thread: %s\n", tid, pid,
		       strerror(-st->ret_sched));
		return st->ret_sched;
	}
	if (st->ret_comm) {
		pr_err("thread %d of %d: prctl(PR_GET_NAME) in the thread: %s\n", tid, pid,
		       strerror(-st->ret_comm));
		return st->ret_comm;
	}
	if (st->ret_robust) {
		pr_err("thread %d of %d: get_robust_list in the thread: %s\n", tid, pid,
		       strerror(-st->ret_robust));
		return st->ret_robust;
	}
	tc->sched_policy = (uint32_t)st->sched_policy;
	tc->sched_prio = (uint32_t)st->sched_prio;
	tc->sched_nice = st->sched_nice;
	_Static_assert(sizeof(b->cpu_mask) >= sizeof(st->cpu_mask), "cpu mask");
	memset(b->cpu_mask, 0, sizeof(b->cpu_mask));
	memcpy(b->cpu_mask, st->cpu_mask, sizeof(st->cpu_mask));
	for (n = ARRAY_SIZE(b->cpu_mask); n && !b->cpu_mask[n - 1]; n--)
		;
	tc->n_cpu_mask = n;
	tc->cpu_mask = b->cpu_mask;
	tc->has_robust_list_head = tc->has_robust_list_len = true;
	tc->robust_list_head = st->robust_head;
	tc->robust_list_len = st->robust_len;
	_Static_assert(sizeof(b->comm) > sizeof(st->comm), "comm");
	memcpy(b->comm, st->comm, sizeof(st->comm));
	b->comm[sizeof(st->comm)] = 0;
	return 0;
}

static int thread_rseq(pid_t pid, pid_t tid, struct thread_bufs *b)
{
	struct cr_ptrace_rseq_configuration rc = { 0 };
	long ret;

	ret = ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, sizeof(rc), &rc);
	if (ret < 0 && errno != EIO) {
		pr_perror("PTRACE_GET_RSEQ_CONFIGURATION of %d/%d", pid, tid);
		return neg_errno();
	}
	/* EIO: a kernel before 5.13, which has no rseq to save either. */
	if (ret > 0 && rc.rseq_abi_pointer) {
		rseq_entry__init(&b->rseq);
		b->rseq.ptr = rc.rseq_abi_pointer;
		b->rseq.len = rc.rseq_abi_size;
		b->rseq.sig = rc.signature;
		b->tc.rseq = &b->rseq;
	}
	return 0;
}

/* What needs the thread in a ptrace stop; @shared: also the process-wide queue. */
struct stopped_reads {
	pid_t pid;
	pid_t tid; /* thread_stopped_reads() */
	struct thread_bufs *b;
	struct sigqueue *shared;
};

static int stopped_reads(pid_t tid, void *arg)
{
	struct stopped_reads *r = arg;
	int err = peek_signals(r->pid, tid, false, &r->b->q);

	if (!err)
		err = thread_rseq(r->pid, tid, r->b);
	if (!err && r->shared)
		err = peek_signals(r->pid, tid, true, r->shared);
	return err;
}

/* stopped_reads() of a thread that is not the leader, on the tracer thread (par.h). */
static int thread_stopped_reads(void *arg)
{
	struct stopped_reads *r = arg;

	return stopped_reads(r->tid, r);
}

/* dump_leader_prefetch(): the queues and rseq of @b, the process-wide queue in @shared */
struct leader_reads {
	struct thread_bufs b;
	struct sigqueue shared;
};

void dump_leader_reads_free(struct leader_reads *lr)
{
	if (!lr)
		return;
	sigqueue_fini(&lr->b.q);
	sigqueue_fini(&lr->shared);
	free(lr);
}

int dump_leader_prefetch(struct dump_task *dt)
{
	const struct seized_task *t = dt->t;
	const struct seized_thread *th = t->nr_threads ? &t->threads[0] : NULL;
	struct leader_reads *lr;
	struct stopped_reads r;
	int err;

	/* a leader that called pthread_exit() is not seized: nothing to read */
	if (!th || th->tid != t->pid || !th->seized || !th->stopped || dt->leader_pre)
		return 0;
	lr = calloc(1, sizeof(*lr));
	if (!lr)
		return -ENOMEM;
	r = (struct stopped_reads){ .pid = t->pid, .b = &lr->b, .shared = &lr->shared };
	err = stopped_reads(t->pid, &r);
	if (err) {
		dump_leader_reads_free(lr);
		return err;
	}
	dt->leader_pre = lr;
	return 0;
}

/* The reads of dump_leader_prefetch() moved into the leader's @b and @shared (if any). */
static void take_leader_reads(struct leader_reads *lr, struct thread_bufs *b,
			      struct sigqueue *shared)
{
	b->q = lr->b.q;
	lr->b.q = (struct sigqueue){ 0 };
	if (lr->b.tc.rseq) {
		b->rseq = lr->b.rseq;
		b->tc.rseq = &b->rseq;
	}
	if (shared) {
		*shared = lr->shared;
		lr->shared = (struct sigqueue){ 0 };
	}
}

/*
 * The rseq registration of a thread the task iterator listed with no signal
 * queued (dump/thread-facts.c): nothing to read in its ptrace stop.
 */
static void listed_reads(const struct thread_raw *raw, struct thread_bufs *b)
{
	if (!raw->rseq)
		return;
	rseq_entry__init(&b->rseq);
	b->rseq.ptr = raw->rseq;
	b->rseq.len = raw->rseq_len;
	b->rseq.sig = raw->rseq_sig;
	b->tc.rseq = &b->rseq;
}

/*
 * Whether the iterator's record @raw of a thread says what its ptrace reads
 * put in @b (its rseq registration): the check, on a process's first thread,
 * that the iterator reads the members this kernel has.
 */
static bool listed_agrees(const struct thread_raw *raw, const struct thread_bufs *b)
{
	const RseqEntry *r = b->tc.rseq;

	if (!raw || (raw->sigpending == 0) != (b->q.n == 0))
		return false;
	return r ? raw->rseq == r->ptr && raw->rseq_len == r->len && raw->rseq_sig == r->sig
		 : !raw->rseq;
}

/*
 * @shared and @thp_disabled (task-wide state read through a thread): the first
 * thread only. @raw (NULL: none): the thread as the task iterator listed it,
 * trusted for what needs its ptrace stop (listed_reads()).
 */
static int dump_thread(struct dump_task *dt, const struct seized_thread *th, struct thread_bufs *b,
		       struct sigqueue *shared, TaskCoreEntry *thp_disabled,
		       const struct thread_raw *raw)
{
	pid_t pid = dt->t->pid, tid = th->tid;
	const struct arch_thread_state *ts = parasite_thread_regs(dt->ctl, tid);
	struct stopped_reads r = { .pid = pid, .tid = tid, .b = b, .shared = shared };
	struct parasite_thread_state st;
	uint64_t blocked;
	int err;

	if (!ts) {
		pr_err("no saved registers for thread %d of %d\n", tid, pid);
		return -ENOENT;
	}
	thread_core_entry__init(&b->tc);
	b->tc.tid = (uint32_t)tid;
	arch_fill_thread_regs(&b->tc, &b->regs, ts);

	err = parasite_get_thread_state(dt->ctl, tid, &st, &blocked);
	if (err)
		return err;
	if (st.ret_altstack || st.ret_tid_address || st.ret_prctl) {
		err = st.ret_altstack	   ? st.ret_altstack
		      : st.ret_tid_address ? st.ret_tid_address
					   : st.ret_prctl;
		pr_err("sigaltstack/prctl in thread %d of %d: %s\n", tid, pid, strerror(-err));
		return err;
	}
	b->tc.has_timer_slack_ns = b->tc.has_pdeath_sig = true;
	b->tc.timer_slack_ns = st.timer_slack_ns;
	b->tc.pdeath_sig = (uint32_t)st.pdeath_sig;
	if (thp_disabled) {
		thp_disabled->has_thp_disabled = true;
		thp_disabled->thp_disabled = st.thp_disable > 0;
	}
	b->tc.blocked = blocked;
	sigaltstack_entry__init(&b->sas);
	b->sas.sp = st.ss_sp;
	b->sas.size = st.ss_size;
	b->sas.flags = (uint32_t)st.ss_flags;
	b->tc.sigaltstack = &b->sas;
	b->tc.has_clear_child_tid = true;
	b->tc.clear_child_tid = st.clear_child_tid;

	if (tid == pid && dt->leader_pre)
		take_leader_reads(dt->leader_pre, b, shared);
	else if (tid == pid)
		err = parasite_leader_stopped(dt->ctl, stopped_reads, &r);
	else if (raw && !raw->sigpending && !shared)
		listed_reads(raw, b);
	else
		err = par_tracer_run(thread_stopped_reads, &r);
	if (err)
		return err;
	b->tc.n_pending = b->q.n;
	b->tc.pending = b->q.p;

	/* seccomp_dump_task() reads the filters; a mode the parasite could not read, from status */
	if (st.seccomp_mode >= SECCOMP_MODE__SECCOMP_DISABLED &&
	    st.seccomp_mode <= SECCOMP_MODE__SECCOMP_FILTER) {
		b->tc.has_seccomp_mode = true;
		b->tc.seccomp_mode = (SeccompMode)st.seccomp_mode;
	}
	err = thread_getters(pid, tid, &st, b);
	if (err)
		return err;
	b->tc.comm.data = (uint8_t *)b->comm;
	b->tc.comm.len = strlen(b->comm);
	b->tc.stopped = dt->t->state == TASK_STOPPED;
	if (b->tc.stopped) {
		b->tc.has_stop_signo = true;
		b->tc.stop_signo = (uint32_t)th->stop_sig;
	}
	return 0;
}

/* Task-wide state, and the arrays the entries point into. */
struct task_bufs {
	TaskCoreEntry tc;
	SigactionEntry sa[NR_SIGNALS];
	SigactionEntry *sap[NR_SIGNALS];
	ItimerEntry it[3];
	unsigned int nr_timers;
	PosixTimerEntry *pt;
	PosixTimerEntry **ptp;
	RlimitEntry rl[NR_RLIMITS];
	RlimitEntry *rlp[NR_RLIMITS];
	struct sigqueue shared;
};

static int task_sigactions(struct dump_task *dt, struct task_bufs *b)
{
	struct parasite_sigaction sa[NR_SIGNALS];
	int err = parasite_get_sigactions(dt->ctl, sa);
	int i;

	if (err)
		return err;
	for (i = 0; i < NR_SIGNALS; i++) {
		if (sa[i].ret) {
			pr_err("rt_sigaction(%d) in %d: %s\n", i + 1, dt->t->pid,
			       strerror(-sa[i].ret));
			return sa[i].ret;
		}
		sigaction_entry__init(&b->sa[i]);
		b->sa[i].handler = sa[i].handler;
		b->sa[i].flags = sa[i].flags;
		b->sa[i].restorer = sa[i].restorer;
		b->sa[i].mask = sa[i].mask;
		b->sap[i] = &b->sa[i];
	}
	b->tc.n_sigactions = NR_SIGNALS;
	b->tc.sigactions = b->sap;
	return 0;
}

static int task_itimers(struct dump_task *dt, struct task_bufs *b)
{
	struct parasite_itimers it;
	int err = parasite_get_itimers(dt->ctl, &it);
	int i;

	if (err)
		return err;
	for (i = 0; i < 3; i++) {
		if (it.t[i].ret) {
			pr_err("getitimer(%d) in %d: %s\n", i, dt->t->pid, strerror(-it.t[i].ret));
			return it.t[i].ret;
		}
		itimer_entry__init(&b->it[i]);
		b->it[i].interval_sec = (uint64_t)it.t[i].interval.sec;
		b->it[i].interval_usec = (uint64_t)it.t[i].interval.usec;
		b->it[i].value_sec = (uint64_t)it.t[i].value.sec;
		b->it[i].value_usec = (uint64_t)it.t[i].value.usec;
	}
	b->tc.itimer_real = &b->it[0];
	b->tc.itimer_virt = &b->it[1];
	b->tc.itimer_prof = &b->it[2];
	return 0;
}

static int timer_notify(const char *how, int *ret)
{
	if (!strcmp(how, "signal"))
		*ret = SIGEV_SIGNAL;
	else if (!strcmp(how, "none"))
		*ret = SIGEV_NONE;
	else if (!strcmp(how, "thread"))
		*ret = SIGEV_THREAD;
	else
		return -EINVAL;
	return 0;
}

/*
 * One timer of /proc/PID/timers (3.10+), as show_timer() prints it:
 * "ID: %d", "signal: %d/%px", "notify: %s/%s.%d" (pid or tid), "ClockID: %d".
 */
static int parse_timer(char **pos, PosixTimerEntry *e)
{
	char how[16], who[8];
	unsigned long long value;
	int id, signo, target, clock;
	char *s = *pos, *nl;

	if (sscanf(s, "ID: %d signal: %d/%llx notify: %15[a-z]/%7[a-z].%d ClockID: %d", &id, &signo,
		   &value, how, who, &target, &clock) != 7)
		return -EINVAL;
	posix_timer_entry__init(e);
	if (timer_notify(how, &e->sigev_notify))
		return -EINVAL;
	e->id = id;
	e->sigev_signo = signo;
	e->sigev_value = value;
	e->clock_id = clock;
	if (!strcmp(who, "tid")) {
		e->sigev_notify |= SIGEV_THREAD_ID;
		e->has_sigev_notify_tid = true;
		e->sigev_notify_tid = (uint32_t)pidns_vpid(target);
	}
	nl = strstr(s, "ClockID:");
	nl = nl ? strchr(nl, '\n') : NULL;
	*pos = nl ? nl + 1 : s + strlen(s);
	return 0;
}

static int task_posix_timers(struct dump_task *dt, struct task_bufs *b)
{
	pid_t pid = dt->t->pid;
	_cleanup_free_ struct parasite_posix_timer *pt = NULL;
	_cleanup_free_ char *text = NULL;
	char path[64], *pos;
	unsigned int n = 0, i;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/timers", pid);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text) {
		pr_perror("read %s", path);
		return -errno;
	}
	/* Lines starting with "ID:" ("ClockID:" contains it too). */
	n = !strncmp(text, "ID:", 3);
	for (pos = text; (pos = strstr(pos, "\nID:")); pos++)
		n++;
	if (!n)
		return 0;
	b->pt = calloc(n, sizeof(*b->pt));
	b->ptp = calloc(n, sizeof(*b->ptp));
	pt = calloc(n, sizeof(*pt));
	if (!b->pt || !b->ptp || !pt)
		return -ENOMEM;
	for (pos = text, i = 0; i < n; i++) {
		if (parse_timer(&pos, &b->pt[i])) {
			pr_err("cannot parse timer %u of %s\n", i, path);
			return -EINVAL;
		}
		pt[i].id = b->pt[i].id;
		b->ptp[i] = &b->pt[i];
	}
	b->nr_timers = n;
	err = parasite_get_posix_timers(dt->ctl, pt, n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		PosixTimerEntry *e = &b->pt[i];

		if (pt[i].ret || pt[i].overrun < 0) {
			err = pt[i].ret ? pt[i].ret : pt[i].overrun;
			pr_err("timer_gettime/timer_getoverrun of timer %d in %d: %s\n", e->id, pid,
			       strerror(-err));
			return err;
		}
		e->value_sec = (uint64_t)pt[i].value_sec;
		e->value_nsec = (uint64_t)pt[i].value_nsec;
		e->interval_sec = (uint64_t)pt[i].interval_sec;
		e->interval_nsec = (uint64_t)pt[i].interval_nsec;
		e->overrun = pt[i].overrun;
	}
	b->tc.n_posix_timers = n;
	b->tc.posix_timers = b->ptp;
	return 0;
}

static int parse_limit(const char *s, uint64_t *ret)
{
	unsigned long long v;

	if (!strcmp(s, "unlimited")) {
		*ret = RLIM_INFINITY;
		return 0;
	}
	if (sscanf(s, "%llu", &v) != 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

/*
 * /proc/PID/limits: a header, then one row per RLIMIT_* in index order, the
 * name padded to 25 columns. prlimit() on another task needs CAP_SYS_RESOURCE
 * in some setups, reading this file does not. Read by prepare_task() before
 * the infection: the parasite raises a soft RLIMIT_NOFILE below the task's
 * open files while it works (parasite.c).
 */
static int task_rlimits(pid_t pid, const char *text, struct task_bufs *b)
{
	char path[64], soft[32], hard[32];
	const char *line;
	unsigned int i;

	snprintf(path, sizeof(path), "/proc/%d/limits", pid);
	if (!text) {
		pr_err("%s was not read before the infection\n", path);
		return -EINVAL;
	}
	line = strchr(text, '\n');
	for (i = 0; i < NR_RLIMITS; i++) {
		rlimit_entry__init(&b->rl[i]);
		if (!line || strlen(++line) < 26 ||
		    sscanf(line + 26, "%31s %31s", soft, hard) != 2 ||
		    parse_limit(soft, &b->rl[i].cur) || parse_limit(hard, &b->rl[i].max)) {
			pr_err("cannot parse row %u of %s\n", i, path);
			return -EINVAL;
		}
		b->rl[i].resource = i;
		b->rlp[i] = &b->rl[i];
		line = strchr(line, '\n');
	}
	b->tc.n_rlimits = NR_RLIMITS;
	b->tc.rlimits = b->rlp;
	return 0;
}

static int task_personality(pid_t pid, uint32_t *ret)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	unsigned int v;

	snprintf(path, sizeof(path), "/proc/%d/personality", pid);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text) {
		pr_perror("read %s", path);
		return -errno;
	}
	if (sscanf(text, "%x", &v) != 1) {
		pr_err("cannot parse %s\n", path);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* A number from /proc/PID/NAME; -ENOENT quietly where @may_lack and the file is not there. */
static int read_proc_long(pid_t pid, const char *name, bool may_lack, long *ret)
{
	_cleanup_free_ char *text = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	text = read_file_at(AT_FDCWD, path, NULL);
	if (!text && may_lack && errno == ENOENT)
		return -ENOENT;
	if (!text) {
		pr_perror("read %s", path);
		return neg_errno();
	}
	if (sscanf(text, "%ld", ret) != 1) {
		pr_err("cannot parse %s\n", path);
		return -EINVAL;
	}
	return 0;
}

/* oom_score_adj, and the audit login uid (4294967295: never set). */
static int task_proc_ids(pid_t pid, TaskCoreEntry *tc)
{
	long v = 0;
	int err;

	err = read_proc_long(pid, "oom_score_adj", false, &v);
	if (err)
		return err;
	tc->has_oom_score_adj = true;
	tc->oom_score_adj = (int32_t)v;
	/* Without CONFIG_AUDIT there is no loginuid file: nothing to restore. */
	err = read_proc_long(pid, "loginuid", true, &v);
	if (err == -ENOENT)
		return 0;
	tc->has_loginuid = !err;
	tc->loginuid = (uint32_t)v;
	return err;
}

static int dump_task_state(struct dump_ctx *ctx, struct dump_task *dt, struct task_bufs *b)
{
	pid_t pid = dt->t->pid;
	int err;

	(void)ctx;
	task_core_entry__init(&b->tc);
	err = task_sigactions(dt, b);
	if (!err)
		err = task_itimers(dt, b);
	if (!err)
		err = task_posix_timers(dt, b);
	if (!err)
		err = task_rlimits(pid, dt->limits, b);
	if (!err)
		err = task_personality(pid, &b->tc.personality);
	if (!err)
		err = task_proc_ids(pid, &b->tc);
	return err;
}

/* creds-PID.img; the child-subreaper flag comes with the same parasite call, for @tc. */
static int dump_creds(struct dump_ctx *ctx, struct dump_task *dt, TaskCoreEntry *tc)
{
	const struct proc_status *s = &dt->status;
	CredsEntry ce = CREDS_ENTRY__INIT;
	uint32_t securebits, dumpable, subreaper, membarrier;
	int err;

	/* in a user namespace of the tree's own, they are set again from inside */
	err = ns_user_check_ids(dt->t->pid, s->uid, s->gid);
	if (!err)
		err = parasite_get_prctl(dt->ctl, &securebits, &dumpable, &subreaper, &membarrier);
	if (err)
		return err;
	tc->has_child_subreaper = true;
	tc->child_subreaper = subreaper;
	tc->has_membarrier = membarrier != 0;
	tc->membarrier = membarrier;
	ce.uid = s->uid[0], ce.euid = s->uid[1], ce.suid = s->uid[2], ce.fsuid = s->uid[3];
	ce.gid = s->gid[0], ce.egid = s->gid[1], ce.sgid = s->gid[2], ce.fsgid = s->gid[3];
	ce.n_groups = s->ngroups;
	ce.groups = (uint32_t *)s->groups;
	ce.cap_inh = s->cap_inh, ce.cap_prm = s->cap_prm, ce.cap_eff = s->cap_eff;
	ce.cap_bnd = s->cap_bnd, ce.cap_amb = s->cap_amb;
	ce.securebits = securebits;
	ce.dumpable = dumpable;
	ce.no_new_privs = s->no_new_privs > 0;
	err = img_write_one(ctx->dirfd, CR_IMG_CREDS, (uint32_t)pidns_vpid(dt->t->pid), &ce.base);
	if (err)
		pr_err("cannot write the creds of %d\n", dt->t->pid);
	return err;
}

struct seccomp_req {
	struct parasite_ctl *ctl;
	pid_t pid;
	ThreadCoreEntry **th;
	unsigned int n;
	TaskCoreEntry *tc;
	struct seccomp_dump *sd;
};

/* seccomp_dump_task() reads the filters with ptrace: on the tracer thread (par.h). */
static int seccomp_stopped(void *arg)
{
	struct seccomp_req *r = arg;

	return seccomp_dump_task(r->ctl, r->pid, r->th, r->n, r->tc, r->sd);
}

int dump_task_core(struct dump_ctx *ctx, struct dump_task *dt)
{
	struct seized_task *t = dt->t;
	CoreEntry ce = CORE_ENTRY__INIT;
	struct task_bufs tb = { 0 };
	struct seccomp_dump sd = { 0 };
	const struct proc_threads *listed = dump_threads_of(ctx, dt);
	struct thread_bufs *thb;
	ThreadCoreEntry **thp;
	unsigned int i, n = 0;
	bool trusted = false;
	int err;

	if (!dt->ctl) {
		/* A zombie has no state to read: pstree.img records its exit code. */
		pr_debug("%d is a zombie: no core image\n", t->pid);
		return 0;
	}
	thb = calloc(t->nr_threads, sizeof(*thb));
	thp = calloc(t->nr_threads, sizeof(*thp));
	err = thb && thp ? dump_task_state(ctx, dt, &tb) : -ENOMEM;
	/* A leader that called pthread_exit() is not seized and has no thread state. */
	for (i = 0; !err && i < t->nr_threads; i++) {
		if (!t->threads[i].seized)
			continue;
		err = dump_thread(dt, &t->threads[i], &thb[n], n ? NULL : &tb.shared,
				  n ? NULL : &tb.tc,
				  trusted ? threads_find(listed, t->threads[i].tid) : NULL);
		/* the first thread read by ptrace vouches for the iterator's records */
		if (!err && !n)
			trusted = listed_agrees(threads_find(listed, t->threads[i].tid), &thb[0]);
		thp[n] = &thb[n].tc;
		n++;
	}
	/* Every thread's seccomp mode and filters (seccomp.c), once their tids are known. */
	if (!err) {
		struct seccomp_req sr = { dt->ctl, t->pid, thp, n, &tb.tc, &sd };

		err = par_tracer_run(seccomp_stopped, &sr);
	}
	if (!err)
		err = lsm_dump_check(t->pid);
	if (!err)
		err = dump_creds(ctx, dt, &tb.tc);
	if (!err) {
		/* read with the host tids; the images name them as the tree sees them */
		for (i = 0; i < n; i++)
			thp[i]->tid = (uint32_t)pidns_vpid((pid_t)thp[i]->tid);
		tb.tc.n_shared_pending = tb.shared.n;
		tb.tc.shared_pending = tb.shared.p;
		ce.pid = (uint32_t)pidns_vpid(t->pid);
		ce.tc = &tb.tc;
		ce.n_threads = n;
		ce.threads = thp;
		err = img_write_one(ctx->dirfd, CR_IMG_CORE, (uint32_t)pidns_vpid(t->pid),
				    &ce.base);
		if (err)
			pr_err("cannot write the core of %d\n", t->pid);
	}
	for (i = 0; thb && i < t->nr_threads; i++)
		sigqueue_fini(&thb[i].q);
	sigqueue_fini(&tb.shared);
	seccomp_dump_fini(&sd);
	free(tb.pt);
	free(tb.ptp);
	free(thb);
	free(thp);
	return err;
}
