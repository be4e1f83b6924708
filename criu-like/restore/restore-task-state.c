// SPDX-License-Identifier: GPL-2.0
/*
 * The task state part of the restorer's arguments, from core-PID.img and
 * creds-PID.img: per thread the sigreturn frame and what the thread
 * restores itself; per process sigactions, itimers, POSIX timers, rlimits,
 * the shared signal queue, credentials, mm fields. Runs in the restored task.
 */
#define LOG_PREFIX "restore-task: "

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asm/restorer-tool.h"
#include "asm/sigframe.h"
#include "log.h"
#include "parasite-rpc.h"
#include "ns.h"
#include "restore-task-int.h"
#include "util.h"

static void copy_siginfos(struct rst_siginfo *out, SiginfoEntry **in, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		memcpy(out[i].raw, in[i]->siginfo.data,
		       min(in[i]->siginfo.len, sizeof(out[i].raw)));
	}
}

/* Thread @i's tid at every level of the tree's pid namespaces, innermost first (clone3). */
static int plan_set_tid(const struct finish *f, uint32_t i, struct rst_thread *th)
{
	const PstreeEntry *pe = f->t->pe;
	size_t d = pe->n_ns_pid, l;

	if (d >= RST_MAX_PID_LEVELS || pe->n_ns_tids != d * pe->n_threads) {
		pr_err("pid %d: %zu pid levels with %zu nested tids for %zu threads\n", f->pid, d,
		       pe->n_ns_tids, pe->n_threads);
		return -EINVAL;
	}
	th->nr_set_tid = (uint32_t)d + 1;
	for (l = 0; l < d; l++)
		th->set_tid[l] = (int32_t)pe->ns_tids[i * d + d - 1 - l];
	th->set_tid[d] = th->tid;
	return 0;
}

int task_plan_thread(struct finish *f, uint32_t i, uint64_t xfeatures)
{
	const ThreadCoreEntry *tc = f->core->threads[i];
	struct rst_thread *th = (struct rst_thread *)((char *)f->a + f->lay.threads_off) + i;
	const struct rst_thread_layout *tl = &f->lay.threads[i];
	struct user_regs_struct regs;
	uint64_t frame = (uint64_t)f->a + tl->frame_off;
	int err;

	arch_rst_regs(tc->gpregs, &regs);
	err = arch_build_sigframe((void *)frame, frame, &regs, tc->blocked, tc->xsave.data,
				  tc->xsave.len, xfeatures);
	if (err) {
		pr_err("pid %d: cannot build the signal frame of thread %u\n", f->pid, tc->tid);
		return err;
	}
	th->tid = (int32_t)tc->tid;
	err = plan_set_tid(f, i, th);
	if (err)
		return err;
	th->frame_off = tl->frame_off;
	th->stack_top_off = tl->stack_top_off;
	th->log_off = tl->log_off;
	arch_rst_thread_tls(tc, th->tls);
	th->ss_flags = SS_DISABLE;
	if (tc->sigaltstack) {
		th->ss_sp = tc->sigaltstack->sp;
		th->ss_size = tc->sigaltstack->size;
		th->ss_flags = (int32_t)tc->sigaltstack->flags;
	}
	th->clear_child_tid = tc->has_clear_child_tid ? tc->clear_child_tid : 0;
	th->robust_head = tc->has_robust_list_head ? tc->robust_list_head : 0;
	th->robust_len = tc->has_robust_list_len ? tc->robust_list_len : 0;
	if (tc->rseq) {
		th->has_rseq = 1;
		th->rseq_ptr = tc->rseq->ptr;
		th->rseq_len = tc->rseq->len;
		th->rseq_sig = tc->rseq->sig;
	}
	memcpy(th->comm, tc->comm.data, min(tc->comm.len, (size_t)RST_COMM_LEN - 1));
	th->sched_policy = tc->sched_policy;
	th->sched_prio = tc->sched_prio;
	th->sched_nice = tc->sched_nice;
	th->timer_slack_ns = tc->has_timer_slack_ns ? tc->timer_slack_ns : 0;
	/*
	 * The root's parent is criu-like now, gone after a detached restore:
	 * its parent-death signal would fire at once.
	 */
	th->pdeath_sig = tc->has_pdeath_sig && f->t->parent ? tc->pdeath_sig : 0;
	th->nr_pending = (uint32_t)tc->n_pending;
	th->pending_off = tl->pending_off;
	copy_siginfos((struct rst_siginfo *)((char *)f->a + tl->pending_off), tc->pending,
		      tc->n_pending);
	return 0;
}

static void plan_timer(struct rst_timer *out, const PosixTimerEntry *e)
{
	out->id = e->id;
	out->clock_id = e->clock_id;
	out->notify = e->sigev_notify;
	out->signo = e->sigev_signo;
	out->value = e->sigev_value;
	out->tid = e->has_sigev_notify_tid ? (int32_t)e->sigev_notify_tid : 0;
	out->interval_sec = (int64_t)e->interval_sec;
	out->interval_nsec = (int64_t)e->interval_nsec;
	out->value_sec = (int64_t)e->value_sec;
	out->value_nsec = (int64_t)e->value_nsec;
}

static void plan_itimer(struct rst_itimer *out, const ItimerEntry *e)
{
	out->interval_sec = (int64_t)e->interval_sec;
	out->interval_usec = (int64_t)e->interval_usec;
	out->value_sec = (int64_t)e->value_sec;
	out->value_usec = (int64_t)e->value_usec;
	/*
	 * An ITIMER_REAL that expired with its SIGALRM still pending reads 0 and
	 * is re-armed when the signal is dequeued; setitimer() with a value of 0
	 * would disarm it for good. Arm it for one more interval instead.
	 */
	if (!out->value_sec && !out->value_usec) {
		out->value_sec = out->interval_sec;
		out->value_usec = out->interval_usec;
	}
}

/*
 * setitimer() of ITIMER_VIRTUAL/ITIMER_PROF adds one tick to the value
 * (kernel/time/itimer.c set_cpu_itimer(), so it never fires early) and
 * getitimer() shows it: the dumped value already holds that tick. Measure
 * the tick (HZ is not visible from userspace) with a throw-away PROF timer.
 */
static uint64_t cpu_itimer_tick_us(void)
{
	static const uint64_t hz_ticks[] = { 1000, 3333, 4000, 10000 };
	struct itimerval one = { { 0, 0 }, { 1, 0 } }, cur, off = { { 0, 0 }, { 0, 0 } };
	uint64_t extra, best = 0;
	size_t i;

	if (setitimer(ITIMER_PROF, &one, NULL) || getitimer(ITIMER_PROF, &cur))
		return 0;
	setitimer(ITIMER_PROF, &off, NULL);
	extra = (uint64_t)cur.it_value.tv_sec * 1000000 + (uint64_t)cur.it_value.tv_usec;
	if (extra <= 1000000)
		return 0;
	extra -= 1000000;
	for (i = 0; i < ARRAY_SIZE(hz_ticks); i++)
		if (!best || labs((long)hz_ticks[i] - (long)extra) < labs((long)best - (long)extra))
			best = hz_ticks[i];
	return labs((long)best - (long)extra) < 500 ? best : 0;
}

/* Take the tick the kernel will add back off a CPU itimer's value. */
static void cpu_itimer_untick(struct rst_itimer *it, uint64_t tick)
{
	int64_t v = it->value_sec * 1000000 + it->value_usec;

	if (!tick || v <= (int64_t)tick)
		return;
	v -= (int64_t)tick;
	it->value_sec = v / 1000000;
	it->value_usec = v % 1000000;
}

/*
 * Bit sig - 1: the controller's action for sig was SIG_DFL with no flags, mask
 * or restorer at the root's fork (rst_snap_self_state()), so every task's is
 * (none sets one before its restorer; zombie_inherit() is for zombies, which
 * never reach it). 0 while not read.
 */
static uint64_t ctl_sig_default;

/* Sigactions, itimers, POSIX timers, rlimits, the shared queue, personality. */
int task_plan_process(struct finish *f)
{
	const TaskCoreEntry *tc = f->core->tc;
	struct rst_args *a = f->a;
	uint64_t tick;
	size_t i;

	if (tc->n_sigactions != RST_NR_SIGNALS || tc->n_rlimits > RST_NR_RLIMITS) {
		pr_err("pid %d: %zu sigactions and %zu rlimits in the core image\n", f->pid,
		       tc->n_sigactions, tc->n_rlimits);
		return -EINVAL;
	}
	a->sig_keep = 0;
	for (i = 0; i < RST_NR_SIGNALS; i++) {
		a->sigactions[i].handler = tc->sigactions[i]->handler;
		a->sigactions[i].flags = tc->sigactions[i]->flags;
		a->sigactions[i].restorer = tc->sigactions[i]->restorer;
		a->sigactions[i].mask = tc->sigactions[i]->mask;
		/* the same already: the restorer leaves it (62 syscalls a task, most often) */
		if (!a->sigactions[i].handler && !a->sigactions[i].flags &&
		    !a->sigactions[i].restorer && !a->sigactions[i].mask)
			a->sig_keep |= ctl_sig_default & (1ULL << i);
	}
	plan_itimer(&a->itimers[0], tc->itimer_real);
	plan_itimer(&a->itimers[1], tc->itimer_virt);
	plan_itimer(&a->itimers[2], tc->itimer_prof);
	tick = cpu_itimer_tick_us();
	cpu_itimer_untick(&a->itimers[1], tick);
	cpu_itimer_untick(&a->itimers[2], tick);
	a->nr_timers = (uint32_t)tc->n_posix_timers;
	a->timers_off = f->lay.timers_off;
	for (i = 0; i < tc->n_posix_timers; i++)
		plan_timer((struct rst_timer *)((char *)a + a->timers_off) + i,
			   tc->posix_timers[i]);
	a->nr_rlimits = (uint32_t)tc->n_rlimits;
	for (i = 0; i < tc->n_rlimits; i++) {
		a->rlimits[i].resource = tc->rlimits[i]->resource;
		a->rlimits[i].cur = tc->rlimits[i]->cur;
		a->rlimits[i].max = tc->rlimits[i]->max;
	}
	a->nr_shared_pending = (uint32_t)tc->n_shared_pending;
	a->shared_pending_off = f->lay.shared_pending_off;
	copy_siginfos((struct rst_siginfo *)((char *)a + a->shared_pending_off), tc->shared_pending,
		      tc->n_shared_pending);
	a->personality = tc->personality;
	a->stopped = f->t->pe->state == TASK_STATE__TASK_STOPPED;
	return 0;
}

/*
 * What every task inherits from the controller, read there once before the
 * root's fork (rst_snap_self_state()) instead of in each task: 0 / -1 while
 * not read (then each task reads or writes as before).
 */
static uint32_t ctl_cap_last;
static bool ctl_read;
static long ctl_oom_score_adj, ctl_loginuid;

static uint32_t cap_last_cap(void)
{
	_cleanup_free_ char *s = NULL;
	unsigned long v;

	if (ctl_cap_last)
		return ctl_cap_last;
	s = read_file_at(AT_FDCWD, "/proc/sys/kernel/cap_last_cap", NULL);
	return s && !parse_ulong(s, &v) && v < 64 ? (uint32_t)v : 40;
}

/* /proc/self/@name as a number; 0 and *@v when it reads as one. */
static int read_proc_self(const char *name, long *v)
{
	char path[64];
	_cleanup_free_ char *s = NULL;
	char *end;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	s = read_file_at(AT_FDCWD, path, NULL);
	if (!s)
		return neg_errno();
	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s ? -EINVAL : 0;
}

void rst_snap_self_state(void)
{
	ctl_cap_last = cap_last_cap();
	ctl_sig_default = 0;
	for (int sig = 1; sig <= RST_NR_SIGNALS; sig++) {
		struct rst_sigaction old = { 1, 1, 1, 1 };

		if (!syscall(SYS_rt_sigaction, sig, NULL, &old, sizeof(old.mask)) && !old.handler &&
		    !old.flags && !old.restorer && !old.mask)
			ctl_sig_default |= 1ULL << (sig - 1);
	}
	ctl_read = !read_proc_self("oom_score_adj", &ctl_oom_score_adj) &&
		   !read_proc_self("loginuid", &ctl_loginuid);
}

/*
 * The creds images keep host ids; a task in a user namespace of the tree's
 * own sets them from inside: each id translated through its maps, the groups
 * left alone when they are the ones every task starts with (ns_user_join():
 * setgroups may be denied inside).
 */
static int creds_inside(struct finish *f, const CredsEntry *c, struct rst_creds *r,
			uint32_t *groups)
{
	const uint32_t host[8] = { c->uid, c->euid, c->suid, c->fsuid,
				   c->gid, c->egid, c->sgid, c->fsgid };
	uint32_t *out[8] = { &r->uid, &r->euid, &r->suid, &r->fsuid,
			     &r->gid, &r->egid, &r->sgid, &r->fsgid };
	size_t i;

	for (i = 0; i < 8; i++)
		if (ns_user_id_inside(i >= 4, host[i], out[i])) {
			pr_err("pid %d: its %s %u is not mapped in its user namespace\n", f->pid,
			       i >= 4 ? "gid" : "uid", host[i]);
			return -ERANGE;
		}
	if (ns_user_groups_kept(c->groups, c->n_groups)) {
		r->nr_groups = RST_GROUPS_KEEP;
		return 0;
	}
	for (i = 0; i < c->n_groups; i++)
		if (ns_user_id_inside(true, c->groups[i], &groups[i])) {
			pr_err("pid %d: its group %u is not mapped in its user namespace\n", f->pid,
			       c->groups[i]);
			return -ERANGE;
		}
	return 0;
}

int task_plan_creds(struct finish *f)
{
	const CredsEntry *c = f->p->creds;
	struct rst_creds *r = &f->a->creds;
	uint32_t *groups = (uint32_t *)((char *)f->a + f->lay.groups_off);

	r->uid = c->uid, r->euid = c->euid, r->suid = c->suid, r->fsuid = c->fsuid;
	r->gid = c->gid, r->egid = c->egid, r->sgid = c->sgid, r->fsgid = c->fsgid;
	r->cap_inh = c->cap_inh, r->cap_prm = c->cap_prm, r->cap_eff = c->cap_eff;
	r->cap_bnd = c->cap_bnd, r->cap_amb = c->cap_amb;
	r->securebits = c->securebits;
	r->no_new_privs = c->no_new_privs;
	r->dumpable = c->dumpable;
	r->nr_groups = (uint32_t)c->n_groups;
	r->groups_off = f->lay.groups_off;
	if (c->n_groups) /* c->groups is NULL then: memcpy(dst, NULL, 0) is undefined */
		memcpy(groups, c->groups, c->n_groups * sizeof(uint32_t));
	r->cap_last = cap_last_cap();
	return ns_user_own() ? creds_inside(f, c, r, groups) : 0;
}

int task_plan_mm(struct finish *f)
{
	const MmEntry *mm = f->p->mm;
	struct rst_mm *r = &f->a->mm;
	struct stat exe, self;
	int err;

	if (mm->n_auxv > RST_AUXV_MAX) {
		pr_err("pid %d: %zu auxv words, at most %d\n", f->pid, mm->n_auxv, RST_AUXV_MAX);
		return -E2BIG;
	}
	r->start_code = mm->start_code, r->end_code = mm->end_code;
	r->start_data = mm->start_data, r->end_data = mm->end_data;
	r->start_brk = mm->start_brk, r->brk = mm->brk, r->start_stack = mm->start_stack;
	r->arg_start = mm->arg_start, r->arg_end = mm->arg_end;
	r->env_start = mm->env_start, r->env_end = mm->env_end;
	r->nr_auxv = (uint32_t)mm->n_auxv;
	memcpy(r->auxv, mm->auxv, mm->n_auxv * sizeof(uint64_t));
	r->exe_fd = -1;
	if (!mm->has_exe_file_id)
		return 0;
	err = task_file_fd(f, mm->exe_file_id, O_RDONLY, &r->exe_fd);
	if (err) {
		pr_err("pid %d: cannot open the executable %s\n", f->pid,
		       rst_file_path(f->ctx, mm->exe_file_id) ?: "?");
		return err;
	}
	/*
	 * The kernel refuses a new exe link (EBUSY) while the old exe file is
	 * still mapped: when the saved exe is the file this task already runs
	 * (criu-like's own binary, for a program that forked without exec), the
	 * saved mappings map it again, and the link is right as it is.
	 */
	if (fstat(r->exe_fd, &exe) == 0 && stat("/proc/self/exe", &self) == 0 &&
	    exe.st_dev == self.st_dev && exe.st_ino == self.st_ino)
		r->exe_fd = -1; /* the fd stays in f->fds, closed with the others */
	return 0;
}

/* Quiet: the caller says what failed. */
static int write_proc_self(const char *name, long v)
{
	char path[64], buf[32];
	_cleanup_close_ int fd = -1;
	int len;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	len = snprintf(buf, sizeof(buf), "%ld", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)len) != len)
		return neg_errno();
	return 0;
}

/*
 * Process-wide attributes that need no restorer: set here, they survive the
 * jump. oom_score_adj cannot go below its current floor without
 * CAP_SYS_RESOURCE (which root lacks here): kept, with a warning.
 */
/*
 * The membarrier(2) registrations of the mm (PARASITE_MEMBARRIER_*): made
 * again by the task itself, whose mm the restorer keeps.
 */
static int restore_membarrier(pid_t pid, uint32_t bits)
{
	static const struct {
		uint32_t bit;
		int cmd;
		const char *name;
	} r[] = {
		{ PARASITE_MEMBARRIER_PRIVATE, 1 << 4, "REGISTER_PRIVATE_EXPEDITED" },
		{ PARASITE_MEMBARRIER_SYNC_CORE, 1 << 6, "REGISTER_PRIVATE_EXPEDITED_SYNC_CORE" },
		{ PARASITE_MEMBARRIER_RSEQ, 1 << 8, "REGISTER_PRIVATE_EXPEDITED_RSEQ" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(r); i++)
		if ((bits & r[i].bit) && syscall(SYS_membarrier, r[i].cmd, 0, 0)) {
			pr_perror("pid %d: membarrier(MEMBARRIER_CMD_%s)", pid, r[i].name);
			return neg_errno();
		}
	return 0;
}

int task_restore_misc(struct finish *f)
{
	const TaskCoreEntry *tc = f->core->tc;
	int err;

	if (tc->has_child_subreaper && prctl(PR_SET_CHILD_SUBREAPER, tc->child_subreaper)) {
		pr_perror("pid %d: PR_SET_CHILD_SUBREAPER", f->pid);
		return neg_errno();
	}
	err = tc->has_membarrier ? restore_membarrier(f->pid, tc->membarrier) : 0;
	if (err)
		return err;
	/* the task has the controller's values still: nothing to write when they are its own */
	err = tc->has_oom_score_adj && !(ctl_read && ctl_oom_score_adj == tc->oom_score_adj)
		      ? write_proc_self("oom_score_adj", tc->oom_score_adj)
		      : 0;
	if (err == -EACCES) {
		pr_warn("pid %d: oom_score_adj %d needs CAP_SYS_RESOURCE: kept\n", f->pid,
			tc->oom_score_adj);
	} else if (err) {
		pr_errno(err, "pid %d: oom_score_adj %d", f->pid, tc->oom_score_adj);
		return err;
	}
	/* (uid_t)-1: never set, and a set loginuid cannot be unset. */
	if (tc->has_loginuid && tc->loginuid != (uint32_t)-1 &&
	    !(ctl_read && ctl_loginuid == (long)tc->loginuid)) {
		err = write_proc_self("loginuid", (long)tc->loginuid);
		if (err) {
			pr_errno(err, "pid %d: loginuid %u", f->pid, tc->loginuid);
			return err;
		}
	}
	return 0;
}
