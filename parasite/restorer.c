// SPDX-License-Identifier: GPL-2.0
/*
 * The restorer blob (Documentation/restore.md): entered by every thread of a
 * restored process with the struct rst_args *, the thread index and that
 * thread's rt_sigreturn frame as its three arguments, on its stack in the
 * restorer area (arch_rst_jump()).
 * Thread 0 (the leader) rebuilds the address space and the process-wide
 * state, then creates the other threads; every thread restores its own
 * state and credentials, reports at the barrier of the shared area and
 * returns: arch/x86/parasite/entry.S then runs rt_sigreturn on its frame.
 * Any failure is logged, recorded in the shared area, and ends the process.
 * The memory part is parasite/restorer/mem.c, linked into this blob alone.
 */
#define RST_FILE "restorer.c"
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/mman.h> /* MADV_COLLAPSE */
#include <linux/userfaultfd.h>
#include <linux/sched.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/uio.h>

#include "asm/parasite-syscall.h"
#include "asm/restorer-arch.h"
#include "asm/restorer-crc.h"
#include "parasite-lib.h"
#include "restorer.h"
#include "restorer/restorer-int.h"

long parasite_main(struct rst_args *a, long idx);

/* Kernel constants newer than the 6.1 UAPI headers, or missing from them. */
#ifndef PR_TIMER_CREATE_RESTORE_IDS
#define PR_TIMER_CREATE_RESTORE_IDS 77 /* 6.17 */
#define PR_TIMER_CREATE_RESTORE_IDS_OFF 0
#define PR_TIMER_CREATE_RESTORE_IDS_ON 1
#endif
#define RST_CLONE_FLAGS                                                                     \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | \
	 CLONE_SETTLS)
#define SECURE_NO_SETUID_FIXUP 2
#define LINUX_CAPABILITY_VERSION_3 0x20080522

struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size;
};

struct kitimerval {
	int64_t interval_sec, interval_usec, value_sec, value_usec;
};

struct kitimerspec {
	int64_t interval_sec, interval_nsec, value_sec, value_nsec;
};

struct ksigevent {
	uint64_t value;
	int32_t signo, notify;
	int32_t tid;
	int32_t pad[11];
};

struct krlimit {
	uint64_t cur, max;
};

struct kstack {
	uint64_t ss_sp;
	int32_t ss_flags, pad;
	uint64_t ss_size;
};

struct kcap_header {
	uint32_t version;
	int32_t pid;
};

struct kcap_data {
	uint32_t effective, permitted, inheritable;
};

/* ---- failure -------------------------------------------------------------- */

static void futex_wake(volatile uint32_t *w)
{
	sys_call6(__NR_futex, (long)w, FUTEX_WAKE, 0x7fffffff, 0, 0, 0);
}

/* Record @err as the restore's failure (the first one wins), wake the controller, die. */
__attribute__((noreturn)) void fail(struct rst_args *a, long err)
{
	volatile struct rst_shared_view *s = shared_of(a);
	int32_t zero = 0;

	if (__atomic_compare_exchange_n(&s->error, &zero, (int32_t)(err < 0 ? err : -EIO), 0,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		s->failed_pid = a->pid;
	futex_wake(&s->nr_pending);
	futex_wake(&s->stage);
	for (;;)
		sys_call1(__NR_exit_group, 1);
}

/* ---- process-wide state --------------------------------------------------- */

/*
 * Setting SIG_IGN drops what is pending for that signal, in every thread:
 * nothing stale stays. Only for the signals pending (every one is blocked
 * here, so rt_sigpending() lists all that the task and its leader hold; the
 * other threads, just created, hold none): the others get their saved action
 * straight away, 62 syscalls fewer per task. Those whose saved action is the
 * one they have already (sig_keep: SIG_DFL, as in criu-like) are left alone.
 */
static void restore_sigactions(struct rst_args *a, struct rst_thread *th)
{
	struct rst_sigaction ign = { .handler = (uint64_t)SIG_IGN };
	uint64_t pending = ~0ULL;
	int sig;

	/* a failure drops every signal, as before */
	if (sys_call2(__NR_rt_sigpending, &pending, 8))
		pending = ~0ULL;
	for (sig = 1; sig <= RST_NR_SIGNALS; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (pending & (1ULL << (sig - 1)))
			check(a, th, sys_rt_sigaction(sig, &ign, 0, 8), "rt_sigaction(%d, SIG_IGN)",
			      sig);
		else if (a->sig_keep & (1ULL << (sig - 1)))
			continue;
		check(a, th, sys_rt_sigaction(sig, &a->sigactions[sig - 1], 0, 8),
		      "rt_sigaction(%d)", sig);
	}
}

static void restore_itimers(struct rst_args *a, struct rst_thread *th)
{
	int i;

	for (i = 0; i < 3; i++)
		check(a, th, sys_call3(__NR_setitimer, i, &a->itimers[i], 0), "setitimer(%d)", i);
}

static void restore_timers(struct rst_args *a, struct rst_thread *th)
{
	struct rst_timer *timers = at(a, a->timers_off);
	unsigned int i;
	long ret;

	if (!a->nr_timers)
		return;
	/* 6.17: timer_create() takes the id to use from its result argument. */
	ret = sys_prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_ON);
	check(a, th, ret, "POSIX timers need prctl(PR_TIMER_CREATE_RESTORE_IDS) (Linux 6.17)");
	/* /proc/PID/timers (the image's order) lists the newest first: create the oldest first. */
	for (i = a->nr_timers; i-- > 0;) {
		struct rst_timer *t = &timers[i];
		struct ksigevent ev = {
			.value = t->value, .signo = t->signo, .notify = t->notify, .tid = t->tid
		};
		struct kitimerspec its = { t->interval_sec, t->interval_nsec, t->value_sec,
					   t->value_nsec };
		int32_t id = t->id;

		check(a, th, sys_call3(__NR_timer_create, t->clock_id, &ev, &id),
		      "timer_create(id %d, clock %d)", t->id, t->clock_id);
		if (id != t->id) {
			rerr(a, th, "timer %d was created with id %d", t->id, id);
			fail(a, -EEXIST);
		}
		check(a, th, sys_call4(__NR_timer_settime, id, 0, &its, 0), "timer_settime(%d)",
		      id);
	}
	check(a, th, sys_prctl(PR_TIMER_CREATE_RESTORE_IDS, PR_TIMER_CREATE_RESTORE_IDS_OFF),
	      "prctl(PR_TIMER_CREATE_RESTORE_IDS, OFF)");
	rdebug(a, th, "%u POSIX timers", a->nr_timers);
}

/*
 * Without CAP_SYS_RESOURCE a hard limit cannot be raised: keep what is
 * allowed, and say so. Set first: the kernel refuses a raise (-EPERM) before
 * it changes anything, and only then is the current limit read, so a limit
 * that can be set as saved costs one call.
 */
static void restore_rlimits(struct rst_args *a, struct rst_thread *th)
{
	unsigned int i;

	for (i = 0; i < a->nr_rlimits; i++) {
		struct rst_rlimit *r = &a->rlimits[i];
		struct krlimit want = { r->cur, r->max }, now;
		long ret = sys_call4(__NR_prlimit64, 0, r->resource, &want, 0);

		if (ret == -EPERM) {
			check(a, th, sys_call4(__NR_prlimit64, 0, r->resource, 0, &now),
			      "prlimit(%u)", r->resource);
			if (want.max > now.max) {
				rwarn(a, th, "rlimit %u: hard limit %lx above %lx, kept",
				      r->resource, want.max, now.max);
				want.max = now.max;
				if (want.cur > want.max)
					want.cur = want.max;
			}
			ret = sys_call4(__NR_prlimit64, 0, r->resource, &want, 0);
		}
		check(a, th, ret, "prlimit(%u, %lx, %lx)", r->resource, want.cur, want.max);
	}
}

static void queue_signals(struct rst_args *a, struct rst_thread *th, int shared)
{
	struct rst_siginfo *si = at(a, shared ? a->shared_pending_off : th->pending_off);
	unsigned int i, n = shared ? a->nr_shared_pending : th->nr_pending;

	/*
	 * Its own pid and tid as it sees them: the images' are the tree's level,
	 * one above a task in a pid namespace nested inside the tree's.
	 */
	long self = sys_call1(__NR_getpid, 0), tid = sys_call1(__NR_gettid, 0);

	for (i = 0; i < n; i++, si++) {
		int sig = *(int32_t *)si->raw;
		long ret;

		/* To self, any si_code is accepted (kernel/signal.c do_rt_sigqueueinfo()). */
		if (shared)
			ret = sys_call3(__NR_rt_sigqueueinfo, self, sig, si->raw);
		else
			ret = sys_call4(__NR_rt_tgsigqueueinfo, self, tid, sig, si->raw);
		check(a, th, ret, "queue signal %d%s", sig, shared ? " (shared)" : "");
	}
}

/* ---- seccomp --------------------------------------------------------------- */

struct ksock_fprog {
	uint16_t len;
	uint16_t pad[3];
	uint64_t filter;
};

/* The thread's filters, oldest first, each on top of the previous ones as seccomp() stacks them. */
static void install_filters(struct rst_args *a, struct rst_thread *th)
{
	struct rst_seccomp *s = at(a, th->seccomp_off);
	uint32_t i;

	if (!rst_args_range_ok(a, th->seccomp_off, th->nr_seccomp, sizeof(*s))) {
		rerr(a, th, "seccomp filters at %lx out of the args", th->seccomp_off);
		fail(a, -EINVAL);
	}
	for (i = 0; i < th->nr_seccomp; i++) {
		struct ksock_fprog prog = { (uint16_t)s[i].len,
					    { 0 },
					    (uint64_t)at(a, s[i].insns_off) };

		if (s[i].len > 0xffff ||
		    !rst_args_range_ok(a, s[i].insns_off, s[i].len, 8 /* sock_filter */)) {
			rerr(a, th, "seccomp filter %u out of the args", i);
			fail(a, -EINVAL);
		}
		check(a, th, sys_call3(__NR_seccomp, SECCOMP_SET_MODE_FILTER, s[i].flags, &prog),
		      "seccomp filter %u of %u (flags %x)", i + 1, th->nr_seccomp, s[i].flags);
	}
	rdebug(a, th, "%u seccomp filters installed", th->nr_seccomp);
}

/* ---- threads and credentials ---------------------------------------------- */

static void create_threads(struct rst_args *a, struct rst_thread *leader)
{
	uint32_t i;

	for (i = 1; i < a->nr_threads; i++) {
		struct rst_thread *th = thread_of(a, i);
		/* as the leader sees it: in its innermost pid namespace */
		int32_t tid = th->set_tid[0];
		struct clone3_args ca = {
			.flags = RST_CLONE_FLAGS,
			.stack = (uint64_t)at(a, th->stack_top_off) - RST_STACK_SIZE,
			.stack_size = RST_STACK_SIZE,
			.tls = th->tls[0],
			.set_tid = (uint64_t)th->set_tid,
			.set_tid_size = th->nr_set_tid,
		};
		long ret;

		ret = rst_clone3_thread(&ca, sizeof(ca), a, i, at(a, th->frame_off));
		if (ret >= 0 && ret != tid)
			ret = -EEXIST;
		check(a, leader, ret, "clone3 of thread %d", tid);
	}
}

/* The pidfds of the task's own threads (PIDFD_THREAD), now that they exist: at their fds. */
static void thread_pidfds(struct rst_args *a, struct rst_thread *th)
{
	struct rst_tpidfd *p = at(a, a->tpidfds_off);
	uint32_t i;

	for (i = 0; i < a->nr_tpidfds; i++, p++) {
		long fd = p->dup_of >= 0 ? p->dup_of : sys_call2(__NR_pidfd_open, p->tid, p->flags);

		check(a, th, fd, "pidfd_open of thread %d", p->tid);
		check(a, th, sys_call3(__NR_dup3, fd, p->fd, p->cloexec ? O_CLOEXEC : 0),
		      "dup3 of the pidfd of thread %d to fd %d", p->tid, p->fd);
		if (p->dup_of < 0)
			sys_close((int)fd);
	}
}

/* io_uring registered buffers, now that the memory they are in is back. */
static void uring_buffers(struct rst_args *a, struct rst_thread *th)
{
	struct rst_uring_reg *r = at(a, a->uring_regs_off);
	struct rst_iovec *iov = at(a, a->uring_iovs_off);
	uint32_t i;

	for (i = 0; i < a->nr_uring_regs; i++, r++)
		check(a, th,
		      sys_call4(__NR_io_uring_register, r->fd, 0 /* IORING_REGISTER_BUFFERS */,
				(long)(iov + r->first), r->nr),
		      "io_uring_register(IORING_REGISTER_BUFFERS) of %u buffers on fd %d", r->nr,
		      r->fd);
}

static void restore_creds(struct rst_args *a, struct rst_thread *th)
{
	struct rst_creds *c = &a->creds;
	struct kcap_header h = { LINUX_CAPABILITY_VERSION_3, 0 };
	struct kcap_data d[2] = {
		{ (uint32_t)c->cap_eff, (uint32_t)c->cap_prm, (uint32_t)c->cap_inh },
		{ (uint32_t)(c->cap_eff >> 32), (uint32_t)(c->cap_prm >> 32),
		  (uint32_t)(c->cap_inh >> 32) },
	};
	uint32_t cap;

	if (c->nr_groups != RST_GROUPS_KEEP)
		check(a, th, sys_call2(__NR_setgroups, c->nr_groups, at(a, c->groups_off)),
		      "setgroups");
	/* Keep the capabilities while the uids change; securebits get their value below. */
	check(a, th, sys_prctl(PR_SET_SECUREBITS, 1 << SECURE_NO_SETUID_FIXUP), "securebits");
	check(a, th, sys_call3(__NR_setresgid, c->gid, c->egid, c->sgid), "setresgid");
	sys_call1(__NR_setfsgid, c->fsgid);
	check(a, th, sys_call3(__NR_setresuid, c->uid, c->euid, c->suid), "setresuid");
	sys_call1(__NR_setfsuid, c->fsuid);
	check(a, th, sys_prctl(PR_SET_SECUREBITS, c->securebits), "PR_SET_SECUREBITS %x",
	      c->securebits);
	/* The bounding set shrinks only while CAP_SETPCAP is still effective. */
	for (cap = 0; cap <= c->cap_last && cap < 64; cap++) {
		if (c->cap_bnd & (1ULL << cap))
			continue;
		check(a, th, sys_prctl(PR_CAPBSET_DROP, cap), "PR_CAPBSET_DROP %u", cap);
	}
	/*
	 * Without no_new_privs only a CAP_SYS_ADMIN task may install a filter:
	 * when the saved creds have neither, now is the last chance. The filter
	 * then applies to what is left of the restorer until the controller
	 * seizes it at the barrier (capset, prctl, futex, poll): see restore.md.
	 */
	if (th->seccomp_mode == SECCOMP_MODE_FILTER && th->seccomp_early)
		install_filters(a, th);
	check(a, th, sys_call2(__NR_capset, &h, d), "capset");
	for (cap = 0; cap <= c->cap_last && cap < 64; cap++) {
		if (!(c->cap_amb & (1ULL << cap)))
			continue;
		check(a, th,
		      sys_call6(__NR_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0, 0),
		      "PR_CAP_AMBIENT_RAISE %u", cap);
	}
	if (c->no_new_privs)
		check(a, th, sys_call6(__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0),
		      "PR_SET_NO_NEW_PRIVS");
	/* A change of euid reset it: set it last. */
	check(a, th, sys_prctl(PR_SET_DUMPABLE, c->dumpable), "PR_SET_DUMPABLE %u", c->dumpable);
}

/* ---- memory --------------------------------------------------------------- */

static void wait_word(volatile uint32_t *w, uint32_t want)
{
	uint32_t v;

	while ((v = __atomic_load_n(w, __ATOMIC_SEQ_CST)) != want)
		sys_call6(__NR_futex, (long)w, FUTEX_WAIT, v, 0, 0, 0);
}

/*
 * How many threads read the pages: the task's threads, at most one per CPU
 * it may run on (more would only wait for a CPU, holding a batch).
 */
static uint32_t fill_workers(struct rst_args *a)
{
	uint64_t mask[16];
	long n = sys_call3(__NR_sched_getaffinity, 0, sizeof(mask), (long)mask);
	uint32_t cpus = 0;
	long i;

	for (i = 0; i < n / 8; i++)
		for (; mask[i]; mask[i] &= mask[i] - 1)
			cpus++;
	if (!a->nr_runs || !cpus)
		return 1;
	return cpus < a->nr_threads ? cpus : a->nr_threads;
}

/* A thread's share of the pages (restorer/mem.c), then one reader fewer. */
static void fill_share(struct rst_args *a, struct rst_thread *th)
{
	fill_pages(a, th);
	if (__atomic_sub_fetch(&a->fill_left, 1, __ATOMIC_SEQ_CST) == 0)
		futex_wake(&a->fill_left);
}

/*
 * The address space as dumped (restorer/mem.c). The other threads are made
 * once the VMAs are mapped, and the first of them (one per CPU) read the
 * pages with the leader, each taking the next batch: the first touch of
 * the pages, which bounds the read, is shared among the CPUs. They wait
 * for the leader (restore_thread() after @threads_go) before their own
 * state: the sigactions (whose SIG_IGN drops what is pending) come first.
 */
static void restore_memory(struct rst_args *a, struct rst_thread *th)
{
	uint64_t t0, c0;

	map_memory(a, th);
	a->fill_claim = 0;
	a->threads_go = 0;
	a->fill_workers = fill_workers(a);
	a->fill_left = a->fill_workers;
	create_threads(a, th);
	t0 = now_us(1);
	c0 = now_us(3);
	if (a->nr_runs)
		fill_share(a, th);
	else
		a->fill_left = 0;
	wait_word(&a->fill_left, 0);
	rdebug(a, th,
	       "%u page runs read and %u checksums checked by %u threads in %lu us (%lu us of "
	       "the leader's CPU)",
	       a->nr_runs, a->nr_crcs, a->fill_workers, now_us(1) - t0, now_us(3) - c0);
	finish_memory(a, th);
}

/* What each thread restores for itself. */
static void restore_thread(struct rst_args *a, struct rst_thread *th)
{
	struct kstack ss = { th->ss_sp, th->ss_flags & ~SS_ONSTACK, 0, th->ss_size };

	check(a, th, rst_set_tls(th->tls[0], th->tls[1]), "TLS");
	check(a, th, sys_sigaltstack(&ss, 0), "sigaltstack %lx/%lx", th->ss_sp, th->ss_size);
	sys_call1(__NR_set_tid_address, th->clear_child_tid);
	if (th->robust_head)
		check(a, th, sys_call2(__NR_set_robust_list, th->robust_head, th->robust_len),
		      "set_robust_list");
	if (th->has_rseq)
		check(a, th, sys_call4(__NR_rseq, th->rseq_ptr, th->rseq_len, 0, th->rseq_sig),
		      "rseq at %lx", th->rseq_ptr);
	check(a, th, sys_prctl(PR_SET_NAME, th->comm), "PR_SET_NAME");
	if (th->sched_policy != 0) {
		uint32_t prio = th->sched_prio;

		check(a, th, sys_call3(__NR_sched_setscheduler, 0, th->sched_policy, &prio),
		      "sched_setscheduler %u", th->sched_policy);
	}
	check(a, th, sys_call3(__NR_setpriority, 0 /* PRIO_PROCESS */, 0, th->sched_nice),
	      "setpriority %d", th->sched_nice);
	if (th->timer_slack_ns)
		check(a, th, sys_prctl(PR_SET_TIMERSLACK, th->timer_slack_ns), "PR_SET_TIMERSLACK");
	queue_signals(a, th, 0);
}

/* Has the process of pidfd @fd (-1: none) exited? */
static int exited(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && sys_call3(__NR_poll, (long)&p, 1, 0) > 0 &&
	       (p.revents & (POLLIN | POLLHUP));
}

/*
 * Report at the barrier, wait for the controller's verdict. @ctl_pidfd (the
 * init of a new pid namespace's leader, else -1): the controller's, looked
 * at before each wait of 100 ms at most. That init cannot tell its parent
 * gone by getppid() (0 whoever it is), and a death of the controller while
 * its creds changed (which clears the parent-death signal) up to the
 * re-arming sent it nothing: it would wait here for ever.
 */
static void barrier(struct rst_args *a, int ctl_pidfd)
{
	volatile struct rst_shared_view *s = shared_of(a);
	struct timespec poll_every = { 0, 100 * 1000 * 1000 };
	uint32_t stage;

	if (__atomic_sub_fetch(&s->nr_pending, 1, __ATOMIC_SEQ_CST) == 0)
		futex_wake(&s->nr_pending);
	for (;;) {
		stage = __atomic_load_n(&s->stage, __ATOMIC_SEQ_CST);
		if (stage == RSTV_STAGE_RESUME)
			return;
		if (stage == RSTV_STAGE_ABORT || exited(ctl_pidfd))
			for (;;)
				sys_call1(__NR_exit_group, 1);
		sys_call6(__NR_futex, (long)&s->stage, FUTEX_WAIT, stage,
			  ctl_pidfd >= 0 ? (long)&poll_every : 0, 0, 0);
	}
}

long parasite_main(struct rst_args *a, long idx)
{
	struct rst_thread *th = thread_of(a, idx);

	if (idx == 0) {
		if (a->magic != RST_ARGS_MAGIC)
			fail(a, -EINVAL);
		check(a, th, sys_call1(__NR_personality, a->personality), "personality %x",
		      a->personality);
		restore_memory(a, th);
		restore_sigactions(a, th);
		/* the threads' own state may follow now */
		__atomic_store_n(&a->threads_go, 1, __ATOMIC_SEQ_CST);
		futex_wake(&a->threads_go);
		thread_pidfds(a, th);
		uring_buffers(a, th);
		/* the next task of a shared fd table may use it now */
		if (a->fdt_done) {
			__atomic_store_n((volatile uint32_t *)a->fdt_done, 1, __ATOMIC_SEQ_CST);
			futex_wake((volatile uint32_t *)a->fdt_done);
		}
		restore_itimers(a, th);
		restore_timers(a, th);
		restore_rlimits(a, th);
		queue_signals(a, th, 1);
	} else {
		if ((uint32_t)idx < a->fill_workers)
			fill_share(a, th);
		wait_word(&a->threads_go, 1);
	}
	restore_thread(a, th);
	restore_creds(a, th);
	if (idx == 0 && a->creds_pause_ms) {
		struct timespec ts = { a->creds_pause_ms / 1000,
				       (long)(a->creds_pause_ms % 1000) * 1000000 };

		sys_call2(__NR_nanosleep, (long)&ts, 0);
	}
	/*
	 * After the creds: a change of euid/egid clears it. The leader keeps
	 * dying with its parent until the barrier, past which it sets its
	 * saved signal; if the parent died meanwhile, no signal will come:
	 * getppid() says so, except to the init of a new pid namespace, whose
	 * barrier() watches the controller's pidfd instead.
	 */
	if (idx == 0) {
		check(a, th, sys_prctl(PR_SET_PDEATHSIG, SIGKILL), "PR_SET_PDEATHSIG");
		if (sys_call1(__NR_getppid, 0) != a->ppid)
			for (;;)
				sys_call1(__NR_exit_group, 1);
	} else if (th->pdeath_sig) {
		check(a, th, sys_prctl(PR_SET_PDEATHSIG, th->pdeath_sig), "PR_SET_PDEATHSIG %u",
		      th->pdeath_sig);
	}
	rdebug(a, th, "at the barrier");
	barrier(a, idx == 0 ? a->ctl_pidfd : -1);
	/*
	 * Seccomp last, after the creds (no_new_privs or CAP_SYS_ADMIN are set
	 * by then), since a filter may forbid what the restorer still does. The
	 * controller holds every thread under ptrace with the filters suspended
	 * from the barrier to the detach, which covers close(), kill(), prctl(),
	 * the shared area's munmap(), the rt_sigreturn and its own munmap() of
	 * this area.
	 */
	if (th->seccomp_mode == SECCOMP_MODE_FILTER && !th->seccomp_early)
		install_filters(a, th);
	if (idx == 0) {
		/*
		 * Its saved signal (none for the root) in place of SIGKILL: from
		 * the barrier on every thread of the tree is held by the
		 * controller with PTRACE_O_EXITKILL, which kills it if the
		 * controller dies before the detach.
		 */
		check(a, th, sys_prctl(PR_SET_PDEATHSIG, th->pdeath_sig), "PR_SET_PDEATHSIG %u",
		      th->pdeath_sig);
		/* the controller holds a copy now, handed to the lazy-pages daemon */
		if (a->uffd_slot)
			sys_close(*(volatile int32_t *)a->uffd_slot);
		if (a->log_fd >= 0)
			sys_close(a->log_fd);
		if (a->ctl_pidfd >= 0)
			sys_close(a->ctl_pidfd);
		if (a->stopped)
			sys_call2(__NR_kill, sys_call1(__NR_getpid, 0), SIGSTOP);
	}
	/* Strict mode allows read, write, exit and rt_sigreturn: nothing else follows. */
	if (th->seccomp_mode == SECCOMP_MODE_STRICT)
		check(a, th, sys_prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT), "strict seccomp");
	/*
	 * The last thread done with the shared area unmaps it (a failure is
	 * still recorded there); the controller unmaps this area once the
	 * thread has left it through rt_sigreturn.
	 */
	if (__atomic_add_fetch(&a->threads_out, 1, __ATOMIC_SEQ_CST) == a->nr_threads)
		check(a, th, sys_call2(__NR_munmap, a->shared, a->shared_len),
		      "munmap of the shared area");
	return 0;
}
