// SPDX-License-Identifier: GPL-2.0
/*
 * The end of an infection (Documentation/infect.md): the cure of every
 * parasite of a dump at once, step by step (FINISH to each command loop, the
 * leaders interrupted and brought out of the blob, the areas unmapped, the
 * leaders' state put back), and the leader's PTRACE_INTERRUPT that the
 * command channel uses too.
 */
#define LOG_PREFIX "infect: "
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "infect.h"
#include "infect-int.h"
#include "log.h"
#include "fault.h"
#include "util.h"

/* Stops seen on the way are handled as while it runs free. */
static int interrupt_wait(struct parasite_ctl *ctl)
{
	int status, err;

	for (;;) {
		err = arch_wait_stop(ctl->pid, &status);
		if (err)
			return err;
		if ((status >> 16) == PTRACE_EVENT_STOP)
			return 0;
		err = arch_handle_async_stop(&ctl->ts[0], status);
		if (err)
			return err;
	}
}

static int interrupt_start(struct parasite_ctl *ctl)
{
	if (ptrace(PTRACE_INTERRUPT, ctl->pid, NULL, 0)) {
		pr_perror("PTRACE_INTERRUPT %d", ctl->pid);
		return neg_errno();
	}
	return 0;
}

int interrupt_leader(struct parasite_ctl *ctl)
{
	int err = interrupt_start(ctl);

	return err ? err : interrupt_wait(ctl);
}

/*
 * The leader ran its rt_sigreturn while nobody watched (the blob gave up on
 * its own): what it runs now is its real state. Take that as the state to
 * keep, with a fresh frame and trampoline for the munmap.
 */
static int adopt_leader_state(struct parasite_ctl *ctl)
{
	int err;

	pr_warn("parasite of %d went home on its own: its current state is kept\n", ctl->pid);
	err = arch_injector_fini(&ctl->inj);
	ctl->inj_ready = false;
	arch_thread_state_fini(&ctl->ts[0]);
	if (!err)
		err = arch_thread_save(ctl->pid, &ctl->ts[0]);
	if (!err)
		err = arch_injector_init(&ctl->inj, &ctl->ts[0]);
	ctl->inj_ready = !err;
	return err;
}

static void ctl_free(struct parasite_ctl *ctl)
{
	unsigned int i;

	if (ctl->local)
		munmap(ctl->local, ctl->size);
	for (i = 0; i < ctl->nr_threads; i++)
		arch_thread_state_fini(&ctl->ts[i]);
	if (ctl->sk >= 0)
		close(ctl->sk);
	if (ctl->lsk >= 0)
		close(ctl->lsk);
	free(ctl->ts);
	free(ctl->task);
	free(ctl);
}

/* One task's cure, step by step in parasite_cure_all(). */
struct cure {
	struct parasite_ctl *ctl;
	struct parasite_msg m;
	int err; /* the first error of the cure */
	int err2; /* of the ptrace steps that bring the leader out of the blob */
	bool stopping, sent, stepping, unmapping, restoring;
};

/* The command loop ends: FINISH to every parasite, then every answer. */
static void finish_cmds(struct cure *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		c[i].stopping = c[i].ctl->leader_running;
		if (!c[i].stopping || c[i].ctl->sk < 0)
			continue;
		c[i].m = (struct parasite_msg){ .cmd = PARASITE_CMD_FINISH };
		c[i].err = ctl_cmd_send(c[i].ctl, &c[i].m, NULL);
		c[i].sent = !c[i].err;
	}
	for (i = 0; i < n; i++)
		if (c[i].sent)
			c[i].err = ctl_cmd_recv(c[i].ctl, &c[i].m, NULL, 0);
}

/* Every leader interrupted in its command loop, its control socket closed. */
static void interrupt_leaders(struct cure *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (c[i].stopping)
			c[i].err2 = interrupt_start(c[i].ctl);
	for (i = 0; i < n; i++) {
		struct parasite_ctl *ctl = c[i].ctl;

		if (!c[i].stopping)
			continue;
		if (!c[i].err2)
			c[i].err2 = interrupt_wait(ctl);
		fault_kill_point();
		if (ctl->sk >= 0)
			close(TAKE_FD(ctl->sk));
		fault_kill_point();
		if (ctl->lsk >= 0)
			close(TAKE_FD(ctl->lsk));
		ctl->leader_running = false;
	}
}

/*
 * Each interrupted leader stepped to its rt_sigreturn, which is cancelled,
 * round after round, one stop of each per round. A leader already out of
 * the area went home on its own: its state now is kept.
 */
static void leave_blobs(struct cure *c, unsigned int n)
{
	struct user_regs_struct regs;
	unsigned int i, left = 0;
	int e;

	for (i = 0; i < n; i++) {
		struct parasite_ctl *ctl = c[i].ctl;

		if (!c[i].stopping || c[i].err2)
			continue;
		c[i].err2 = arch_get_regs(ctl->pid, &regs);
		if (c[i].err2)
			continue;
		if (arch_regs_pc(&regs) < ctl->remote ||
		    arch_regs_pc(&regs) >= ctl->remote + ctl->size) {
			c[i].err2 = adopt_leader_state(ctl);
			c[i].err = c[i].err ?: -EIO;
			continue;
		}
		c[i].err2 = arch_step_blob_start(&ctl->ts[0]);
		c[i].stepping = !c[i].err2;
		left += c[i].stepping;
	}
	while (left) {
		for (i = 0; i < n; i++) {
			struct arch_blob_range r;

			if (!c[i].stepping)
				continue;
			r = ctl_blob_range(c[i].ctl);
			e = arch_step_blob_next(&c[i].ctl->ts[0], &r, -1, NULL);
			if (!e)
				continue;
			c[i].stepping = false;
			left--;
			if (e < 0)
				c[i].err2 = e;
		}
	}
	for (i = 0; i < n; i++) {
		if (!c[i].stopping)
			continue;
		drain_log(c[i].ctl);
		c[i].err = c[i].err ?: c[i].err2;
	}
}

/* munmap() of the area injected into every leader, the patch placed again for it. */
static void unmap_areas(struct cure *c, unsigned int n)
{
	unsigned int i;
	long ret;
	int e;

	for (i = 0; i < n; i++) {
		struct parasite_ctl *ctl = c[i].ctl;
		unsigned long args[6] = { ctl->remote, ctl->size };

		if (!ctl->remote || !ctl->inj_ready)
			continue;
		e = arch_injector_place(&ctl->inj);
		if (!e)
			e = arch_inject_syscall_start(&ctl->inj, __NR_munmap, args);
		c[i].unmapping = !e;
		c[i].err = c[i].err ?: e;
	}
	/* every munmap() entered first, then each one's exit taken: they run side by side */
	for (i = 0; i < n; i++) {
		if (!c[i].unmapping)
			continue;
		e = arch_inject_syscall_entered(&c[i].ctl->inj, __NR_munmap);
		c[i].unmapping = !e;
		c[i].err = c[i].err ?: e;
	}
	for (i = 0; i < n; i++) {
		struct parasite_ctl *ctl = c[i].ctl;

		if (!c[i].unmapping)
			continue;
		e = arch_inject_syscall_exited(&ctl->inj, &ret);
		if (!e && ret) {
			pr_errno((int)ret, "munmap of the parasite area in %d", ctl->pid);
			e = (int)ret;
		}
		c[i].err = c[i].err ?: e;
	}
}

/* Every leader's registers, sigmask and xstate back; then the patched bytes. */
static void restore_leaders(struct cure *c, unsigned int n)
{
	unsigned int i;
	int e;

	for (i = 0; i < n; i++) {
		struct parasite_ctl *ctl = c[i].ctl;

		if (!ctl->nr_threads || !ctl->ts[0].xstate || (!ctl->inj_ready && !ctl->remote))
			continue;
		e = arch_thread_restore_start(&ctl->ts[0]);
		c[i].restoring = !e;
		c[i].err = c[i].err ?: e;
	}
	for (i = 0; i < n; i++) {
		if (!c[i].restoring)
			continue;
		e = arch_thread_restore_finish(&c[i].ctl->ts[0]);
		c[i].err = c[i].err ?: e;
	}
	for (i = 0; i < n; i++) {
		if (!c[i].ctl->inj_ready)
			continue;
		e = arch_injector_fini(&c[i].ctl->inj);
		c[i].err = c[i].err ?: e;
	}
}

/*
 * Each step runs even when an earlier one failed: the task must get back
 * as much of its state as can be given back. Order matters within a task:
 * the leader leaves the blob before the area goes, and its registers go
 * back last. Each step is taken in every task before the next, so that
 * the tasks run to their next stop while the dumper handles the others'
 * (infect.md, "The cure of a tree").
 */
int parasite_cure_all(struct parasite_ctl **ctls, unsigned int nr, int *ret_errs)
{
	_cleanup_free_ struct cure *c = calloc(nr ? nr : 1, sizeof(*c));
	unsigned int i, n = 0;
	int err = 0;

	if (!c)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		if (ctls[i])
			c[n++].ctl = ctls[i];
	finish_cmds(c, n);
	interrupt_leaders(c, n);
	leave_blobs(c, n);
	unmap_areas(c, n);
	restore_leaders(c, n);
	for (i = 0, n = 0; i < nr; i++) {
		int e = 0;

		if (ctls[i]) {
			e = c[n].err;
			if (e)
				pr_err("cure of %d: %d\n", ctls[i]->pid, e);
			else
				pr_info("task %d cured\n", ctls[i]->pid);
			ctl_free(TAKE_PTR(ctls[i]));
			n++;
		}
		if (ret_errs)
			ret_errs[i] = e;
		err = err ?: e;
	}
	return err;
}

void parasite_discard(struct parasite_ctl *ctl)
{
	if (ctl)
		ctl_free(ctl);
}

int parasite_cure(struct parasite_ctl *ctl)
{
	return parasite_cure_all(&ctl, 1, NULL);
}
