/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRIU_LIKE_ASM_INFECT_ARCH_H
#define CRIU_LIKE_ASM_INFECT_ARCH_H

/*
 * x86-64 side of the infection engine (Documentation/infect.md): saving and
 * restoring a ptrace-stopped thread exactly, injecting syscalls through the
 * vDSO trampoline with a sigreturn frame as safety net, and running code
 * in a thread until it reaches rt_sigreturn.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>
/* sys/user.h defines these too: keep util.h's spelling so both can be included. */
#undef PAGE_SIZE
#undef PAGE_MASK
#define PAGE_SIZE 4096UL
#define PAGE_MASK (~(PAGE_SIZE - 1))

struct iovec;

/* The original state of one thread, as found in its seize stop. */
struct arch_thread_state {
	pid_t tid;
	struct user_regs_struct regs; /* exact: put back at the end */
	struct user_regs_struct resume; /* syscall restart done by hand, orig_rax = -1 */
	uint64_t sigmask;
	size_t xsize;
	uint8_t *xstate; /* NT_X86_XSTATE, xsize bytes */
	uint64_t stolen_sigs; /* stop signals absorbed while infected, re-sent on restore */
	bool skipping; /* arch_step_blob_next(): its rt_sigreturn cancelled, until the exit stop */
	long last_nr; /* arch_step_blob_next(): the syscall of the last entry stop */
};

int arch_thread_save(pid_t tid, struct arch_thread_state *t);
void arch_thread_state_fini(struct arch_thread_state *t);
/* Bytes of the sigreturn frame for this thread (64-byte multiple). */
size_t arch_thread_frame_size(const struct arch_thread_state *t);
/* Frame at task address @addr that brings the thread back to its original state. */
int arch_thread_frame(const struct arch_thread_state *t, uint64_t addr, void *buf);

/*
 * From any ptrace stop of a thread whose registers point at injected code:
 * go through a PTRACE_INTERRUPT stop (where the kernel's syscall restart
 * logic runs after we resume), then put back sigmask, xstate and the exact
 * registers. Re-sends absorbed stop signals. Returns 0 or -errno.
 */
int arch_thread_restore(struct arch_thread_state *t);
/* The same in two halves: start leaves the thread running to its PTRACE_INTERRUPT stop. */
int arch_thread_restore_start(struct arch_thread_state *t);
int arch_thread_restore_finish(struct arch_thread_state *t);

/* Syscall injection into one thread (the leader, normally). */
struct arch_injector {
	pid_t tid;
	struct arch_thread_state *ts;
	uint64_t code; /* "syscall; mov $15,%eax; syscall" */
	uint64_t patch; /* word-aligned address of the patched 16 bytes */
	uint8_t saved[16];
	bool patched;
	bool own_code; /* no vDSO: the patch is over the thread's own code */
	uint64_t frame; /* the safety-net frame on the task's stack */
};

/* Find the trampoline place, write the frame below the red zone, patch the code. */
int arch_injector_init(struct arch_injector *inj, struct arch_thread_state *ts);
/*
 * The same with the start of the task's [vDSO] known (@vdso: from a maps
 * read while it is seized; 0: it has none, ARCH_VDSO_LOOKUP: read its maps).
 */
#define ARCH_VDSO_LOOKUP (-1L)
int arch_injector_init_at(struct arch_injector *inj, struct arch_thread_state *ts, long vdso);
/*
 * Without a vDSO the patch is over the task's own code, which a dump saves
 * (the write made the page an anonymous copy): lift it while the parasite
 * runs on its own, place it again before the next injected syscall. Both do
 * nothing when the patch is in the vDSO.
 */
int arch_injector_lift(struct arch_injector *inj);
int arch_injector_place(struct arch_injector *inj);
/*
 * Run syscall @nr with @args in the thread. On success the thread sits in
 * the syscall-exit stop with registers that, resumed without us, run
 * rt_sigreturn on the frame. Returns 0 and *ret = rax, or -errno.
 */
int arch_inject_syscall(struct arch_injector *inj, long nr, const unsigned long args[6], long *ret);
/*
 * arch_inject_syscall() in two halves, for many tasks at once: start sets
 * the registers and resumes the thread; finish waits for its entry and exit
 * stops. While one task's stops are handled, the others run to theirs.
 */
int arch_inject_syscall_start(struct arch_injector *inj, long nr, const unsigned long args[6]);
int arch_inject_syscall_finish(struct arch_injector *inj, long nr, long *ret);
/*
 * finish in two halves too: its entry stop taken and the thread sent on to
 * its exit (entered), then the exit stop (exited). Taken across many tasks,
 * their syscalls run side by side, rather than each while the dumper waits.
 */
int arch_inject_syscall_entered(struct arch_injector *inj, long nr);
int arch_inject_syscall_exited(struct arch_injector *inj, long *ret);
/* Put the patched bytes back. Call after arch_thread_restore(). */
int arch_injector_fini(struct arch_injector *inj);

/*
 * Start code at @rip with stack @rsp and arguments @a0..@a2 (rdi, rsi, rdx),
 * all signals blocked. @trace_syscalls: resume with PTRACE_SYSCALL, else
 * PTRACE_CONT. Registers are set before the sigmask, so a dumper dying in
 * between leaves code that ends in rt_sigreturn anyway.
 */
int arch_start_code(struct arch_thread_state *ts, uint64_t rip, uint64_t rsp, uint64_t a0,
		    uint64_t a1, uint64_t a2, bool trace_syscalls);
/* Where the blob's code and its rt_sigreturn instruction lie in the task. */
struct arch_blob_range {
	uint64_t lo, hi; /* code: a syscall from elsewhere means the thread left */
	uint64_t sr_lo, sr_hi; /* the rt_sigreturn sequence of the entry trampoline */
};

/*
 * Step the thread by syscall stops while it runs the blob. Returns 0 with
 * *rval at the exit stop of syscall @nr (@nr < 0: never), 1 when it entered
 * rt_sigreturn from the trampoline: that syscall is cancelled and the
 * thread left at its exit stop (the code after the syscall must jump back
 * to it, so that a thread resumed there without us still returns home).
 * -EIO when the thread made a syscall outside the blob, or -errno.
 */
int arch_step_blob(struct arch_thread_state *ts, const struct arch_blob_range *r, long nr,
		   long *rval);

/*
 * The blob run without stops (the thread mode, whose end waits on the
 * dumper's hold: infect-hold.c). arch_blob_run(): PTRACE_CONT from the stop
 * where arch_start_code() left the thread. arch_blob_poll(): a stop it
 * reported meanwhile, if any, taken (a signal that cannot be blocked is
 * absorbed and sent again at the restore) and the thread let go on; -EFAULT
 * for a fault in our code (the thread left in that stop), -ESRCH if it died.
 * arch_blob_halt(): PTRACE_INTERRUPT, whose stop arch_thread_restore_finish()
 * takes before it puts the thread back.
 */
int arch_blob_run(struct arch_thread_state *ts);
int arch_blob_poll(struct arch_thread_state *ts);
int arch_blob_halt(struct arch_thread_state *ts);

/*
 * arch_step_blob() cut in steps, for many threads at once: start resumes
 * the thread (registers set by arch_start_code(run = false)); each next
 * waits for its next stop, handles it and resumes it again: 0, or 1 once
 * at the exit stop of its cancelled rt_sigreturn, or 2 with *@rval at the
 * exit stop of syscall @nr (@nr < 0: never; not resumed either way), or
 * -errno. While one thread's stop is handled, the others run.
 */
int arch_step_blob_start(struct arch_thread_state *ts);
int arch_step_blob_next(struct arch_thread_state *ts, const struct arch_blob_range *r, long nr,
			long *rval);

/* Read the general registers of a stopped thread. Returns 0 or -errno, errno kept for the caller. */
int arch_get_regs(pid_t tid, struct user_regs_struct *r);
/* Read the extended state (xsave area) of a stopped thread into @iov, trimmed to its size. */
int arch_get_xstate(pid_t tid, struct iovec *iov);

static inline uint64_t arch_regs_pc(const struct user_regs_struct *r)
{
	return r->rip;
}

static inline uint64_t arch_regs_sp(const struct user_regs_struct *r)
{
	return r->rsp;
}

/* Blocking wait for the next stop of @tid. Returns 0 or -ESRCH when it died. */
int arch_wait_stop(pid_t tid, int *status);
/* Handle a stop seen while the thread runs free: resume it. Returns 0 or -errno. */
int arch_handle_async_stop(struct arch_thread_state *ts, int status);

#endif
