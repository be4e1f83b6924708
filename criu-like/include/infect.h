/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_INFECT_H
#define CRIU_LIKE_INFECT_H

/*
 * Syscall injection and the dump-time parasite (Documentation/infect.md).
 * Every function works on one task already seized by seize_tree(): every
 * thread in a ptrace stop, seized with PTRACE_O_TRACESYSGOOD and without
 * PTRACE_O_EXITKILL (a dying dumper must leave its tasks alive). All
 * return 0 or -errno and log the failure once.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "asm/infect-arch.h"
#include "parasite-rpc.h"

struct parasite_ctl;

/* The id thread @tid of task @pid has in its own pid namespace (what gettid() says there). */
pid_t ns_tid(pid_t pid, pid_t tid);

/*
 * Run syscall @nr(@args) in the stopped thread @tid and put it back
 * exactly as it was (registers, sigmask, xstate, code bytes). *ret is the
 * syscall's raw result (-errno for a failed call).
 */
int compel_syscall(pid_t tid, long nr, const unsigned long args[6], long *ret);

/* One syscall for compel_syscalls(): nr < 0 skips it; ret is its raw result. */
struct compel_call {
	long nr;
	unsigned long args[6];
	long ret;
};

/*
 * compel_syscall() of @calls[i * @per .. i * @per + @per) in thread @tids[i],
 * in that order, for i in [0, @n), one session per thread: saved once, put
 * back once. Each call is started in every thread, then each one's stops
 * taken, so the threads run to their stops while the others' are handled.
 * A thread whose injection fails gets no further call and is put back all
 * the same. Returns 0 or the first error.
 */
int compel_syscalls(const pid_t *tids, unsigned int n, struct compel_call *calls, unsigned int per);

/*
 * Infect task @pid whose threads are @tids[0..@nr_threads) (tids[0] must be
 * @pid). Per-thread state is collected here for every thread but the
 * leader; the leader then runs the command loop until parasite_cure().
 */
int parasite_infect(pid_t pid, const pid_t *tids, unsigned int nr_threads,
		    struct parasite_ctl **ret);

/* One task for parasite_infect_all(). */
struct infect_req {
	pid_t pid;
	const pid_t *tids;
	unsigned int nr_threads;
	/* its [vdso]'s start, from a maps read while seized (0: none; ARCH_VDSO_LOOKUP) */
	long vdso;
};

/*
 * parasite_infect() of @reqs[0..@n), step by step across all of them:
 * ret_ctls[i] is the control block of reqs[i], NULL when its infection
 * failed (it is cured then), ret_errs[i] (unless NULL) its result. Returns
 * the first error or 0; the tasks infected are the caller's to cure.
 */
int parasite_infect_all(const struct infect_req *reqs, unsigned int n,
			struct parasite_ctl **ret_ctls, int *ret_errs);
/*
 * The same, @mapped(@arg, ctls) called once every area is mapped and the
 * threads' state taken, when no infection failed so far: the address spaces
 * then change no more (the rest runs in the areas), so that what reads them
 * (smaps) may start while the parasites are started. ctls[i] is reqs[i]'s
 * control block, to be read only (parasite_area()).
 */
int parasite_infect_all_hook(const struct infect_req *reqs, unsigned int n,
			     struct parasite_ctl **ret_ctls, int *ret_errs,
			     void (*mapped)(void *arg, struct parasite_ctl *const *ctls),
			     void *arg);

int parasite_get_pid(struct parasite_ctl *ctl, pid_t *ret_pid, pid_t *ret_tid);
/* sa[i] is signal i + 1; sa[i].ret is the per-signal rt_sigaction result. */
int parasite_get_sigactions(struct parasite_ctl *ctl, struct parasite_sigaction sa[64]);
/*
 * Send GET_TASK now (the sigactions, itimers, the leader's thread state and
 * the prctl values in one command), its answer read and kept before the
 * next command: the parasites of a tree all wake up and work at once,
 * instead of each when its task's turn comes, and parasite_get_sigactions(),
 * _get_itimers(), _get_thread_state() of the leader and _get_prctl() send
 * nothing (dump.c).
 */
int parasite_prefetch_task(struct parasite_ctl *ctl);
/*
 * The fd of the parasite's control socket in the task, from GET_TASK's
 * answer; -1 when unknown (then it is told by its peer, criu-like).
 */
int parasite_control_fd(struct parasite_ctl *ctl);
int parasite_get_itimers(struct parasite_ctl *ctl, struct parasite_itimers *ret);
/*
 * Run @fn(leader tid, @arg) with the leader in a ptrace stop, for requests
 * that need one while it runs the parasite. Returns @fn's result or -errno.
 */
int parasite_leader_stopped(struct parasite_ctl *ctl, int (*fn)(pid_t tid, void *arg), void *arg);
/*
 * prctl(PR_GET_SECUREBITS), prctl(PR_GET_DUMPABLE), PR_GET_CHILD_SUBREAPER and
 * the membarrier(2) registrations (PARASITE_MEMBARRIER_*), run in the task.
 */
int parasite_get_prctl(struct parasite_ctl *ctl, uint32_t *securebits, uint32_t *dumpable,
		       uint32_t *child_subreaper, uint32_t *membarrier);
/* Fill @t[0..@n) whose .id is set (ids from /proc/PID/timers). */
int parasite_get_posix_timers(struct parasite_ctl *ctl, struct parasite_posix_timer *t,
			      unsigned int n);
/* sigaltstack, clear_child_tid and the blocked mask of thread @tid. */
int parasite_get_thread_state(struct parasite_ctl *ctl, pid_t tid,
			      struct parasite_thread_state *ret, uint64_t *ret_sigmask);
/* The registers, xstate and sigmask of thread @tid as found at the seize, or NULL. */
const struct arch_thread_state *parasite_thread_regs(struct parasite_ctl *ctl, pid_t tid);
/*
 * Run syscall @nr in the leader, in a ptrace stop, with @data[0..@size)
 * copied into the parasite's data area: each argument i whose bit is set
 * in @data_args is an offset into @data, passed as its address in the
 * task. @data gets the area's bytes back after the call; *@ret is its raw
 * result (-errno for a failed call).
 */
int parasite_syscall_data(struct parasite_ctl *ctl, long nr, const unsigned long args[6],
			  unsigned int data_args, void *data, size_t size, long *ret);
/* Receive the task's fds @fds[0..@n) as fds of the dumper in @ret_fds. */
int parasite_drain_fds(struct parasite_ctl *ctl, const int *fds, unsigned int n, int *ret_fds);
/*
 * vmsplice the task's pages @iov[0..@n) (task addresses) into the pipe
 * @pipe (both ends: the parasite holds the read end too while it splices,
 * so a dumper dying meanwhile cannot make the task get SIGPIPE), without
 * blocking: size the pipe for them. Returns the bytes spliced or -errno.
 */
long parasite_vmsplice(struct parasite_ctl *ctl, const int pipe[2], const struct iovec *iov,
		       unsigned int n);

/*
 * Arm write tracking (pre-dump): the parasite creates a userfaultfd with
 * UFFD_FEATURE_WP_ASYNC in the task, registers the @n ranges in
 * write-protect mode, protects them, and hands the uffd over (*@ret_uffd);
 * the task keeps no fd. Closing the last reference drops the tracking.
 * @sync_devfd other than -1: a synchronous uffd instead (--snapshot: every
 * write to a protected page waits for the dumper), made through that
 * /dev/userfaultfd fd when >= 0, else with userfaultfd() (-2); the ranges
 * are then only registered: the caller write-protects them (UFFDIO_WRITEPROTECT
 * works on the task's mm from any process holding the uffd). @no_protect:
 * WP_ASYNC, but registered only as well (the caller protects what it will copy).
 */
int parasite_track_mem(struct parasite_ctl *ctl, const struct iovec *ranges, unsigned int n,
		       int sync_devfd, bool no_protect, int *ret_uffd);

/*
 * Unmap the areas that dumpers killed while infecting left in task @pid
 * (shared anonymous rwx mappings with the signature size, starting with
 * our blob or zeros), except one a thread still runs in. Touches the task
 * only when there is one.
 */
int parasite_remove_stale_areas(pid_t pid, const pid_t *tids, unsigned int nr_threads,
				unsigned int *removed);
/* The same with its maps (@maps, read while it is seized): no read of its own. */
struct vma_list;
int parasite_remove_stale_areas_in(pid_t pid, const pid_t *tids, unsigned int nr_threads,
				   const struct vma_list *maps, unsigned int *removed);

/*
 * Stop the parasite, unmap the area, put every register, the sigmask,
 * xstate and the patched bytes back, free @ctl. The task is left in a
 * ptrace stop for unseize_tree().
 */
int parasite_cure(struct parasite_ctl *ctl);
/*
 * parasite_cure() of @ctls[0..@n) (NULL entries skipped, every entry NULL
 * on return), step by step across all of them. ret_errs[i] (unless NULL):
 * the cure's result for ctls[i]. Returns the first error or 0.
 */
int parasite_cure_all(struct parasite_ctl **ctls, unsigned int n, int *ret_errs);
/*
 * Free @ctl of a task killed while infected, touching nothing of it (its
 * area and registers went with it): the control socket closed, the local
 * mapping of the area gone.
 */
void parasite_discard(struct parasite_ctl *ctl);

/* [*@start, *@end): the parasite's area in the task (what the infection mapped). */
void parasite_area(const struct parasite_ctl *ctl, unsigned long *start, unsigned long *end);

#endif
