// SPDX-License-Identifier: GPL-2.0
/*
 * rst_resume_tasks(): the controller's last step. The restorer area (blob,
 * args, stacks, frames) is mapped in every restored task until its threads
 * have left it through rt_sigreturn, and no code of the task can unmap the
 * memory it runs from. So the controller seizes every thread while it waits
 * at the barrier, says RST_STAGE_RESUME (past which the blob sets the
 * leader's saved parent-death signal and its last thread unmaps the shared
 * area), follows each thread by syscall stops to the exit of its
 * rt_sigreturn (the thread is then in its saved state), injects munmap() of
 * the restorer area into the leader, and detaches. Until
 * the detach the threads are held with PTRACE_O_EXITKILL: a death of the
 * controller kills them before they run. A task restored stopped gets its SIGSTOP right
 * before the detach (the one the restorer sends is held back on the way).
 */
#define LOG_PREFIX "restore-resume: "

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "compat.h"
#include "infect.h"
#include "fault.h"
#include "log.h"
#include "restore-int.h"
#include "restore-mem.h"
#include "util.h"

#define RESUME_TIMEOUT_MS 10000

/* struct ptrace_syscall_info (5.3) up to the entry's nr: linux/ptrace.h clashes with glibc's. */
struct cr_syscall_info {
	uint8_t op;
	uint8_t pad[3];
	uint32_t arch;
	uint64_t ip, sp;
	uint64_t nr; /* entry: the syscall number */
	uint64_t args[6];
};

#define CR_SYSCALL_INFO_ENTRY 1
#define CR_SYSCALL_INFO_EXIT 2

struct rthread {
	pid_t tid;
	bool seized, in_sigreturn, done;
	bool back; /* wait_back_in_syscalls(): seen back in its syscall */
	uint64_t sp; /* at the entry of rt_sigreturn: inside the restorer area */
	uint64_t ip; /* at the entry of rt_sigreturn: right after its syscall instruction */
};

struct rtask {
	struct rst_task *t;
	pid_t pid; /* as criu-like sees it (rst_host_pid()); th[].tid too */
	struct rthread *th;
	size_t n;
	bool stop; /* restored stopped: its stop signal on the detach */
	int stop_sig; /* SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU, as the dump saw it */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Whether some thread of @t has a seccomp mode (restore-seccomp.c). */
static bool has_seccomp(const struct rst_task *t)
{
	size_t i;

	for (i = 0; i < t->core->n_threads; i++)
		if (t->core->threads[i]->has_seccomp_mode &&
		    t->core->threads[i]->seccomp_mode != SECCOMP_MODE__SECCOMP_DISABLED)
			return true;
	return false;
}

/*
 * Seize @tid in its futex wait, to be held in a PTRACE_EVENT_STOP
 * (seize_wait()). A thread
 * with seccomp installs its filters or strict mode after the barrier, then
 * still calls close(), kill() and rt_sigreturn(), and we inject munmap():
 * PTRACE_O_SUSPEND_SECCOMP (4.3, CAP_SYS_ADMIN, CONFIG_CHECKPOINT_RESTORE)
 * keeps them out of its reach until the detach, which ends the suspension.
 */
static int seize_one(pid_t pid, struct rthread *th, bool seccomp)
{
	long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL |
		    (seccomp ? CR_PTRACE_O_SUSPEND_SECCOMP : 0);

	if (ptrace(PTRACE_SEIZE, th->tid, NULL, (void *)opts)) {
		pr_perror("pid %d: PTRACE_SEIZE of thread %d", pid, th->tid);
		return neg_errno();
	}
	th->seized = true;
	fault_kill_point();
	if (ptrace(PTRACE_INTERRUPT, th->tid, NULL, NULL)) {
		pr_perror("pid %d: PTRACE_INTERRUPT of thread %d", pid, th->tid);
		return neg_errno();
	}
	return 0;
}

/* The interrupt stop of a thread seize_one() took. */
static int seize_wait(pid_t pid, struct rthread *th)
{
	int status;

	if (waitpid(th->tid, &status, __WALL) != th->tid) {
		pr_perror("pid %d: PTRACE_INTERRUPT of thread %d", pid, th->tid);
		return neg_errno();
	}
	if (!WIFSTOPPED(status) || status >> 16 != PTRACE_EVENT_STOP) {
		pr_err("pid %d: thread %d: unexpected status %#x at the barrier\n", pid, th->tid,
		       status);
		return -EINVAL;
	}
	return 0;
}

/*
 * Handle one stop of a thread on its way out of the restorer. Returns 1
 * when it sits at the exit of rt_sigreturn, 0 when resumed, -errno.
 */
static int step_one(struct rtask *rt, struct rthread *th, int status)
{
	pid_t pid = (pid_t)rt->t->pe->pid;
	struct cr_syscall_info si;
	int sig = 0;

	if (!WIFSTOPPED(status)) {
		pr_err("pid %d: thread %d died in the restorer (status %#x)\n", pid, th->tid,
		       status);
		return -ESRCH;
	}
	if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {
		if (ptrace(PTRACE_GET_SYSCALL_INFO, th->tid, (void *)sizeof(si), &si) <= 0) {
			pr_perror("pid %d: PTRACE_GET_SYSCALL_INFO of %d", pid, th->tid);
			return neg_errno();
		}
		if (si.op == CR_SYSCALL_INFO_ENTRY && si.nr == __NR_rt_sigreturn) {
			th->in_sigreturn = true;
			th->sp = si.sp;
			th->ip = si.ip;
		} else if (si.op == CR_SYSCALL_INFO_EXIT && th->in_sigreturn) {
			pr_debug("pid %d: thread %d left the restorer\n", pid, th->tid);
			return 1;
		}
	} else if (status >> 16 == 0 && WSTOPSIG(status) == SIGSTOP) {
		pr_debug("pid %d: thread %d: SIGSTOP held back\n", pid, th->tid);
		rt->stop = true; /* the restorer's own: given back on the detach */
	} else if (status >> 16 == 0) {
		sig = WSTOPSIG(status);
	}
	fault_kill_point();
	if (ptrace(PTRACE_SYSCALL, th->tid, NULL, (void *)(long)sig)) {
		pr_perror("pid %d: PTRACE_SYSCALL of %d", pid, th->tid);
		return neg_errno();
	}
	return 0;
}

/*
 * Until a tracee's next stop (its SIGCHLD, blocked by the caller) or @ms.
 * A SIGCHLD already taken by an earlier pass only costs one more pass.
 */
/* The tid of the other tracer thread (resume_split()): NULL or 0 when there is none. */
static __thread const pid_t *peer_tracer;

static void wait_sigchld(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	siginfo_t si;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	/*
	 * SIGCHLD is the process's: one of the kernel's may be for the other
	 * tracer's tracees, which then looks too (a copy from the peer is not
	 * passed on again)
	 */
	if (sigtimedwait(&set, &si, &ts) == SIGCHLD && si.si_code != SI_TKILL && peer_tracer) {
		pid_t peer = __atomic_load_n(peer_tracer, __ATOMIC_ACQUIRE);

		if (peer)
			syscall(__NR_tgkill, getpid(), peer, SIGCHLD);
	}
}

/*
 * Follow every thread to the exit of its rt_sigreturn. A pass that finds
 * no stop waits for the next one's SIGCHLD, not for a fixed sleep.
 */
static int run_to_sigreturn(struct rtask *tasks, size_t nr)
{
	uint64_t deadline = now_ms() + RESUME_TIMEOUT_MS;
	size_t i, j, left, seen;
	int err, status;
	pid_t r;

	for (i = 0; i < nr; i++)
		for (j = 0; j < tasks[i].n; j++)
			if (ptrace(PTRACE_SYSCALL, tasks[i].th[j].tid, NULL, NULL))
				return neg_errno();
	do {
		left = seen = 0;
		for (i = 0; i < nr; i++) {
			for (j = 0; j < tasks[i].n; j++) {
				struct rthread *th = &tasks[i].th[j];

				if (th->done)
					continue;
				left++;
				r = waitpid(th->tid, &status, __WALL | WNOHANG);
				if (r < 0)
					return neg_errno();
				if (!r)
					continue;
				seen++;
				err = step_one(&tasks[i], th, status);
				if (err < 0)
					return err;
				th->done = err == 1;
			}
		}
		if (left && !seen)
			wait_sigchld(10);
	} while (left && now_ms() < deadline);
	if (left) {
		pr_err("%zu threads still in the restorer %d ms after the resume\n", left,
		       RESUME_TIMEOUT_MS);
		return -ETIMEDOUT;
	}
	return 0;
}

/* A leader on its way out: its saved state, held while its last syscall runs. */
struct leave {
	struct user_regs_struct saved;
	uint64_t mask; /* its saved signal mask */
	uint64_t code; /* the syscall instruction of its rt_sigreturn, in the restorer area */
	uint64_t stolen; /* stop signals taken on the way: sent again at the end */
	uint64_t area[2]; /* its restorer area, start and length: the munmap() it leaves with */
	long ret;
	int err;
	bool held, running;
};

/* Until @tid's next syscall stop; a stop signal met on the way is kept in @l->stolen. */
static int next_syscall_stop(pid_t pid, pid_t tid, struct leave *l)
{
	int status;

	for (;;) {
		if (waitpid(tid, &status, __WALL) != tid) {
			pr_perror("pid %d: waiting for thread %d", pid, tid);
			return neg_errno();
		}
		if (!WIFSTOPPED(status)) {
			pr_err("pid %d: thread %d died leaving the restorer (status %#x)\n", pid,
			       tid, status);
			return -ESRCH;
		}
		if (WSTOPSIG(status) == (SIGTRAP | 0x80))
			return 0;
		/* every signal blocked: only SIGSTOP is delivered; a group stop needs it */
		if (status >> 16 == 0)
			l->stolen |= 1ULL << (WSTOPSIG(status) - 1);
		if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL)) {
			pr_perror("pid %d: PTRACE_SYSCALL of %d", pid, tid);
			return neg_errno();
		}
	}
}

/* Every leader's munmap() of its area: each one started, then each one's stops taken. */
static void leave_step(struct rtask *tasks, struct leave *lv, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		struct user_regs_struct r = lv[i].saved;
		pid_t tid = tasks[i].th[0].tid;

		if (lv[i].err)
			continue;
		r.rip = lv[i].code;
		r.rax = __NR_munmap;
		r.orig_rax = (unsigned long)-1;
		r.rdi = lv[i].area[0];
		r.rsi = lv[i].area[1];
		fault_kill_point();
		if (ptrace(PTRACE_SETREGS, tid, NULL, &r) ||
		    ptrace(PTRACE_SYSCALL, tid, NULL, NULL)) {
			lv[i].err = neg_errno();
			pr_errno(lv[i].err, "pid %d: starting the munmap() of its restorer area",
				 tasks[i].pid);
		}
		lv[i].running = !lv[i].err;
	}
	for (i = 0; i < nr; i++) {
		pid_t tid = tasks[i].th[0].tid;

		if (!lv[i].running)
			continue;
		lv[i].running = false;
		/* the entry stop, then the exit stop */
		lv[i].err = next_syscall_stop(tasks[i].pid, tid, &lv[i]);
		if (!lv[i].err && ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
			lv[i].err = neg_errno();
		if (!lv[i].err)
			lv[i].err = next_syscall_stop(tasks[i].pid, tid, &lv[i]);
		errno = 0;
		if (!lv[i].err)
			lv[i].ret = ptrace(PTRACE_PEEKUSER, tid,
					   offsetof(struct user_regs_struct, rax), NULL);
		if (!lv[i].err && errno)
			lv[i].err = neg_errno();
	}
}

/* The leader's saved registers and mask taken, every signal blocked while its calls run. */
static int leave_hold(struct restore_ctx *ctx, struct rtask *rt, struct leave *l)
{
	const uint64_t *slot = rst_area_slot(ctx, rst_task_idx(ctx, rt->t));
	uint64_t all = ~0ULL;
	pid_t tid = rt->th[0].tid;

	l->code = rt->th[0].ip - 2;
	if (l->code < slot[0] || l->code + 2 > slot[1] || rt->th[0].sp < slot[0] ||
	    rt->th[0].sp >= slot[1]) {
		pr_err("pid %d: left the restorer from %#lx (stack %#lx), not from its area "
		       "%#lx-%#lx\n",
		       rt->pid, (unsigned long)l->code, (unsigned long)rt->th[0].sp,
		       (unsigned long)slot[0], (unsigned long)slot[1]);
		return -EINVAL;
	}
	if (ptrace(PTRACE_GETREGS, tid, NULL, &l->saved) ||
	    ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(l->mask), &l->mask)) {
		pr_perror("pid %d: the registers or the mask of %d", rt->pid, tid);
		return neg_errno();
	}
	l->held = true;
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(all), &all)) {
		pr_perror("pid %d: PTRACE_SETSIGMASK of %d", rt->pid, tid);
		return neg_errno();
	}
	/* the code it runs from goes with it */
	l->area[0] = slot[0];
	l->area[1] = slot[1] - slot[0];
	return 0;
}

/* Its saved registers and mask back, and the stop signals taken on the way. */
static int leave_release(const struct rtask *rt, struct leave *l)
{
	pid_t tid = rt->th[0].tid;
	int sig, err = 0;

	if (!l->held)
		return 0;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &l->saved) ||
	    ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(l->mask), &l->mask)) {
		err = neg_errno();
		pr_errno(err, "pid %d: putting back the registers or the mask of %d", rt->pid, tid);
	}
	for (sig = 1; sig <= 64; sig++)
		if (l->stolen & (1ULL << (sig - 1)))
			kill(tid, sig);
	return err;
}

/*
 * In each leader, held at the exit of its rt_sigreturn in its saved state:
 * munmap() of its restorer area (the blob set its parent-death signal and
 * unmapped the shared area after the barrier). Run at the syscall
 * instruction of that rt_sigreturn with PTRACE_SYSCALL: the munmap returns
 * into its exit stop, and the unmapped code after it never runs, as the
 * saved registers go back there. A syscall changes rax, rcx, r11 and rip
 * only: no frame, no xstate and no trampoline to place (compel_syscalls()
 * does all that for a thread stopped anywhere). Every task at once.
 */
static int leave_areas(struct restore_ctx *ctx, struct rtask *tasks, size_t nr)
{
	_cleanup_free_ struct leave *lv = calloc(nr + 1, sizeof(*lv));
	size_t i;
	int err = 0;

	if (!lv)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		lv[i].err = leave_hold(ctx, &tasks[i], &lv[i]);
	fault_kill_point();
	leave_step(tasks, lv, nr);
	for (i = 0; i < nr; i++) {
		int e = leave_release(&tasks[i], &lv[i]);

		if (!lv[i].err && lv[i].ret) {
			lv[i].err = (int)lv[i].ret;
			pr_errno(lv[i].err, "pid %d: munmap of the restorer area", tasks[i].pid);
		}
		err = err ?: lv[i].err ?: e;
	}
	return err;
}

/*
 * The last steps, every thread held at the exit of its rt_sigreturn with
 * PTRACE_O_EXITKILL: a death of criu-like until the detach kills every
 * thread of the tree before it runs an instruction of its own. A SIGSTOP
 * sent now stays pending (no thread can take it) and stops the process
 * before it runs anything after the detach.
 */
/*
 * Whether process group @pgid of session @sid is kept from being orphaned
 * inside the tree itself: one of its tasks has a parent in the tree, in
 * another group of the same session. The kernel drops SIGTSTP, SIGTTIN and
 * SIGTTOU sent to an orphaned group (only SIGSTOP stops it), and whether the
 * root's group is orphaned depends on who its parent is after the restore.
 */
static bool group_held(const struct rtask *tasks, size_t nr, uint32_t pgid, uint32_t sid)
{
	for (size_t i = 0; i < nr; i++) {
		const PstreeEntry *c = tasks[i].t->pe;

		if (c->pgid != pgid)
			continue;
		for (size_t j = 0; j < nr; j++) {
			const PstreeEntry *p = tasks[j].t->pe;

			if (p->pid == c->ppid && p->pgid != pgid && p->sid == sid)
				return true;
		}
	}
	return false;
}

/*
 * The signal that stops @rt again: the one that stopped it (its parent's
 * waitpid() sees WSTOPSIG as before), SIGSTOP when that one could be dropped.
 */
static int stop_signal(const struct rtask *tasks, size_t nr, const struct rtask *rt)
{
	const PstreeEntry *pe = rt->t->pe;

	if (rt->stop_sig == SIGSTOP || group_held(tasks, nr, pe->pgid, pe->sid))
		return rt->stop_sig;
	pr_debug("pid %u: stopped by signal %d, stopped again by SIGSTOP: its group could be "
		 "orphaned outside the tree\n",
		 pe->pid, rt->stop_sig);
	return SIGSTOP;
}

static int finish_all(struct restore_ctx *ctx, struct rtask *tasks, size_t nr)
{
	size_t i;
	int err = leave_areas(ctx, tasks, nr);

	for (i = 0; !err && i < nr; i++)
		if (tasks[i].stop && kill(tasks[i].pid, stop_signal(tasks, nr, &tasks[i])))
			err = neg_errno();
	return err;
}

/*
 * The commit: the detach ends PTRACE_O_EXITKILL, thread by thread. Nothing
 * but the detaches is left to do, in a tight loop (restore.md says what a
 * death inside it does).
 */
static void detach_all(struct rtask *tasks, size_t nr)
{
	size_t i, j;

	for (i = 0; i < nr; i++)
		for (j = tasks[i].n; j-- > 0;)
			if (tasks[i].th[j].seized)
				ptrace(PTRACE_DETACH, tasks[i].th[j].tid, NULL, NULL);
}

/*
 * Is @tid in syscall @nr again (/proc/PID/task/TID/syscall), or gone (it
 * need not be waited for)? Not when running or unknown.
 */
static bool back_in_syscall(pid_t pid, pid_t tid, long nr)
{
	char path[64];
	_cleanup_free_ char *s = NULL;
	long cur;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	s = read_file_at(AT_FDCWD, path, NULL);
	if (!s)
		return errno == ENOENT || errno == ESRCH;
	return sscanf(s, "%ld", &cur) == 1 && cur == nr;
}

/*
 * A thread dumped inside a restartable syscall (sigsuspend, ppoll...) runs
 * it again right after the detach, and until it is back in it, what /proc
 * shows of it (SigBlk, for sigsuspend's temporary mask) differs from the
 * dump. Wait (a little) until each is back, so the tree returned is the
 * tree dumped.
 */
static void wait_back_in_syscalls(struct rtask *tasks, size_t nr)
{
	uint64_t deadline = now_ms() + 1000;
	size_t i, j, left;

	do {
		left = 0;
		for (i = 0; i < nr; i++) {
			const CoreEntry *c = tasks[i].t->core;

			for (j = 0; !tasks[i].stop && j < c->n_threads && j < tasks[i].n; j++) {
				const UserRegsEntry *r = c->threads[j]->gpregs;
				struct rthread *th = &tasks[i].th[j];
				long ax = (long)r->ax;

				if (th->back || (long)r->orig_ax < 0 || ax < -514 || ax > -512)
					continue; /* back already, or not in a syscall that restarts */
				th->back = back_in_syscall(tasks[i].pid, th->tid, (long)r->orig_ax);
				left += !th->back;
			}
		}
		if (left)
			usleep(500);
	} while (left && now_ms() < deadline);
	if (left)
		pr_debug("%zu threads not back in their syscall 1 s after the resume\n", left);
}

/* The job-control signal that stopped the task (its threads'), SIGSTOP if none says. */
static int stop_sig_of(const CoreEntry *c)
{
	for (size_t j = 0; j < c->n_threads; j++) {
		const ThreadCoreEntry *tc = c->threads[j];

		if (tc->has_stop_signo && (tc->stop_signo == SIGTSTP || tc->stop_signo == SIGTTIN ||
					   tc->stop_signo == SIGTTOU || tc->stop_signo == SIGSTOP))
			return (int)tc->stop_signo;
	}
	return SIGSTOP;
}

/*
 * The restored tasks and their threads, with the ids criu-like sees. At the
 * barrier every one must be there; once the tree runs (@running) a task or
 * thread may have exited already (a `sleep` of a shell): it is marked back
 * in its syscall, and in a pid namespace its host id is not found any more.
 */
static int collect(struct restore_ctx *ctx, struct rtask **ret, size_t *ret_n, bool running)
{
	struct rtask *tasks = calloc(ctx->nr_tasks ? ctx->nr_tasks : 1, sizeof(*tasks));
	size_t n = 0, j;
	unsigned int i;

	if (!tasks)
		return -ENOMEM;
	*ret = tasks;
	*ret_n = 0;
	for (i = 0; i < ctx->nr_tasks; i++) {
		struct rst_task *t = &ctx->tasks[i];
		struct rtask *rt = &tasks[n];

		if (!t->core)
			continue;
		rt->t = t;
		rt->stop = t->pe->state == TASK_STATE__TASK_STOPPED;
		rt->stop_sig = stop_sig_of(t->core);
		rt->th = calloc(t->pe->n_threads, sizeof(*rt->th));
		if (!rt->th)
			return -ENOMEM;
		rt->n = t->pe->n_threads;
		rt->pid = rst_host_pid(ctx, t);
		*ret_n = ++n;
		for (j = 0; j < rt->n; j++) {
			rt->th[j].tid = rst_host_tid(ctx, t, (pid_t)t->pe->threads[j]);
			if (rt->pid > 0 && rt->th[j].tid > 0)
				continue;
			if (!running) {
				pr_err("pid %u: thread %u not found at the barrier\n", t->pe->pid,
				       t->pe->threads[j]);
				return -ESRCH;
			}
			rt->th[j].back = true;
			pr_debug("pid %u: thread %u gone already\n", t->pe->pid, t->pe->threads[j]);
		}
	}
	return 0;
}

/*
 * The tasks a tracer thread takes from the barrier to the detach. ptrace
 * requests come from the thread that seized the tracee: with two CPUs, two
 * threads each take their half of the tree (resume_split()), in step: all
 * seized before RST_STAGE_RESUME, all out of the restorer before any
 * detach.
 */
struct resume_part {
	struct restore_ctx *ctx;
	struct rtask *tasks;
	size_t n;
	pthread_barrier_t *bar; /* NULL: one part, no other thread */
	int *errs; /* both parts' errors, read by each after a barrier */
	unsigned int me; /* errs[me] is this part's */
	pid_t tid; /* its thread's, once it runs (for the other's SIGCHLDs) */
	const pid_t *peer; /* the other part's tid */
	uint64_t out_us; /* the main part: when every thread left the restorer */
};

/* Wait for the other part; -ECANCELED when it failed (it said why). */
static int part_sync(struct resume_part *p, int err)
{
	/* the other's word may be its next step's already: an error stays an error */
	__atomic_store_n(&p->errs[p->me], err, __ATOMIC_RELEASE);
	if (!p->bar)
		return err;
	pthread_barrier_wait(p->bar);
	return err ?: __atomic_load_n(&p->errs[!p->me], __ATOMIC_ACQUIRE) ? -ECANCELED : 0;
}

static int resume_part(struct resume_part *p)
{
	struct rtask *tasks = p->tasks;
	size_t i, j, n = p->n;
	int err = 0;

	__atomic_store_n(&p->tid, gettid(), __ATOMIC_RELEASE);
	peer_tracer = p->peer;
	/* every thread interrupted first, then each stop taken: no round trip each */
	for (i = 0; !err && i < n; i++)
		for (j = 0; !err && j < tasks[i].n; j++)
			err = seize_one(tasks[i].pid, &tasks[i].th[j], has_seccomp(tasks[i].t));
	for (i = 0; i < n; i++)
		for (j = 0; j < tasks[i].n && tasks[i].th[j].seized; j++)
			err = err ?: seize_wait(tasks[i].pid, &tasks[i].th[j]);
	err = part_sync(p, err);
	if (!err && !p->me) {
		rst_set_stage(p->ctx->shared, RST_STAGE_RESUME);
		fault_kill_point();
	}
	/* the stage is set once both parts are past this */
	err = part_sync(p, err);
	if (!err)
		err = run_to_sigreturn(tasks, n);
	p->out_us = now_us();
	if (!err)
		err = finish_all(p->ctx, tasks, n);
	/* on failure rst_abort() kills them still attached: none runs its own code */
	err = part_sync(p, err);
	if (!p->me)
		fault_kill_point();
	if (!err)
		detach_all(tasks, n);
	return err;
}

static void *resume_thread(void *arg)
{
	struct resume_part *p = arg;

	resume_part(p);
	return NULL;
}

/* Below this many tasks one tracer is enough. */
#define SPLIT_MIN 16

/*
 * The second half of @p[0]'s tasks to @p[1], run by a second tracer thread
 * when there is a second CPU: its own ptrace stops, its own syscalls into
 * the tasks, in parallel with the caller's. -EAGAIN: not split.
 */
static int resume_split(struct resume_part p[2], pthread_t *th)
{
	cpu_set_t cpus;

	if (p[0].n < SPLIT_MIN || sched_getaffinity(0, sizeof(cpus), &cpus) ||
	    CPU_COUNT(&cpus) < 2 || pthread_barrier_init(p[0].bar, NULL, 2))
		return -EAGAIN;
	p[1] = p[0];
	p[1].tasks = p[0].tasks + p[0].n / 2;
	p[1].n = p[0].n - p[0].n / 2;
	p[1].me = 1;
	p[0].n /= 2;
	p[0].peer = &p[1].tid;
	p[1].peer = &p[0].tid;
	/* the thread starts with SIGCHLD blocked (the caller's mask) */
	if (pthread_create(th, NULL, resume_thread, &p[1])) {
		pthread_barrier_destroy(p[0].bar);
		p[0].n += p[1].n;
		return -EAGAIN;
	}
	return 0;
}

int rst_resume_tasks(struct restore_ctx *ctx)
{
	struct rtask *tasks = NULL;
	uint64_t start = now_us(), t1;
	pthread_barrier_t bar;
	struct resume_part p[2] = { 0 };
	int errs[2] = { 0, 0 };
	bool split = false;
	sigset_t chld, old;
	pthread_t th;
	size_t n = 0, i;
	int err;

	err = collect(ctx, &tasks, &n, false);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	p[0] = (struct resume_part){
		.ctx = ctx, .tasks = tasks, .n = n, .bar = &bar, .errs = errs
	};
	if (!err)
		split = !resume_split(p, &th);
	if (!split)
		p[0].bar = NULL;
	err = err ?: resume_part(&p[0]);
	if (split) {
		pthread_join(th, NULL);
		pthread_barrier_destroy(&bar);
		err = err ?: errs[1];
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	t1 = now_us();
	/* back in their syscalls: rst_settle_tasks(), once the held packets went */
	if (!err)
		pr_debug("%zu tasks run (%d tracer threads): out of the restorer in %llu us, areas "
			 "unmapped and detached in %llu us\n",
			 n, split ? 2 : 1, (unsigned long long)(p[0].out_us - start),
			 (unsigned long long)(t1 - p[0].out_us));
	for (i = 0; tasks && i < n; i++)
		free(tasks[i].th);
	free(tasks);
	return err;
}

void rst_settle_tasks(struct restore_ctx *ctx)
{
	struct rtask *tasks = NULL;
	size_t n = 0, i;

	if (!collect(ctx, &tasks, &n, true))
		wait_back_in_syscalls(tasks, n);
	for (i = 0; tasks && i < n; i++)
		free(tasks[i].th);
	free(tasks);
}
