// SPDX-License-Identifier: GPL-2.0
#define LOG_PREFIX "inject: "
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <cpuid.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "asm/compat.h"
#include "asm/infect-arch.h"
#include "asm/sigframe.h"
#include "fault.h"
#include "log.h"
#include "util.h"

/* include/linux/errno.h: kernel-internal, never seen by userspace except in a stopped syscall. */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

#define RED_ZONE 128
/* syscall; mov $15,%eax; syscall */
static const uint8_t trampoline[9] = { 0x0f, 0x05, 0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

enum stop_kind {
	STOP_SYSCALL,
	STOP_EVENT,
	STOP_AGAIN /* a signal absorbed or another ptrace event: resume and wait again */
};

int arch_get_regs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) ? neg_errno() : 0;
}

int arch_get_xstate(pid_t tid, struct iovec *iov)
{
	return ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, iov) ? neg_errno() : 0;
}

/* Asked once: CPUID exits to the hypervisor in a VM, microseconds a call, and a dump saves every thread. */
static size_t xstate_max_size(void)
{
	static size_t size;
	unsigned int eax, ebx, ecx, edx;

	if (size)
		return size;
	/* CPUID.(EAX=0DH,ECX=0):ECX is the XSAVE area size for every supported feature. */
	if (__get_cpuid_count(0xd, 0, &eax, &ebx, &ecx, &edx) &&
	    ecx >= FXSAVE_SIZE + XSAVE_HDR_SIZE)
		size = ecx;
	else
		size = 4096;
	return size;
}

/*
 * poll() and ppoll() without a timeout end in -ERESTART_RESTARTBLOCK too;
 * issued again they are exactly what was interrupted (programs such as
 * util-linux script take an EINTR from an endless poll as the end).
 */
static bool restart_without_timeout(const struct user_regs_struct *r)
{
	return (r->orig_rax == SYS_poll && (int)r->rdx < 0) ||
	       (r->orig_rax == SYS_ppoll && r->rdx == 0);
}

/*
 * A thread stopped inside a syscall has rax = -ERESTART* and orig_rax = nr;
 * the kernel rewinds it only when it leaves a signal stop. Do that by hand
 * for the registers used where no such stop follows (frames, the
 * in-between states). @frame: the registers go into a sigreturn frame,
 * and rt_sigreturn resets restart_block, so restart_syscall would fail:
 * an interrupted sleep then returns -EINTR, as CRIU does.
 */
void arch_restart_adjust(struct user_regs_struct *r, bool frame)
{
	if ((long)r->orig_rax >= 0) {
		switch ((long)r->rax) {
		case -ERESTARTSYS:
		case -ERESTARTNOINTR:
		case -ERESTARTNOHAND:
			r->rax = r->orig_rax;
			r->rip -= 2;
			break;
		case -ERESTART_RESTARTBLOCK:
			if (frame && !restart_without_timeout(r)) {
				r->rax = (unsigned long)-EINTR;
			} else if (frame) {
				/* No time to account for: issue the same call again. */
				r->rax = r->orig_rax;
				r->rip -= 2;
			} else {
				r->rax = SYS_restart_syscall;
				r->rip -= 2;
			}
			break;
		}
	}
	r->orig_rax = (unsigned long)-1;
}

int arch_thread_save(pid_t tid, struct arch_thread_state *t)
{
	struct iovec iov;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &t->regs)) {
		pr_perror("PTRACE_GETREGS %d", tid);
		return neg_errno();
	}
	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof(t->sigmask), &t->sigmask)) {
		pr_perror("PTRACE_GETSIGMASK %d", tid);
		return neg_errno();
	}
	t->xstate = calloc(1, xstate_max_size());
	if (!t->xstate)
		return -ENOMEM;
	iov.iov_base = t->xstate;
	iov.iov_len = xstate_max_size();
	if (ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &iov)) {
		pr_perror("PTRACE_GETREGSET NT_X86_XSTATE %d", tid);
		arch_thread_state_fini(t);
		return neg_errno();
	}
	t->xsize = iov.iov_len;
	t->resume = t->regs;
	arch_restart_adjust(&t->resume, false);
	return 0;
}

void arch_thread_state_fini(struct arch_thread_state *t)
{
	free(t->xstate);
	t->xstate = NULL;
}

size_t arch_thread_frame_size(const struct arch_thread_state *t)
{
	return (arch_sigframe_size(t->xsize) + XSTATE_ALIGN - 1) & ~(size_t)(XSTATE_ALIGN - 1);
}

int arch_thread_frame(const struct arch_thread_state *t, uint64_t addr, void *buf)
{
	struct user_regs_struct r = t->regs;

	arch_restart_adjust(&r, true);
	return arch_build_sigframe(buf, addr, &r, t->sigmask, t->xstate, t->xsize,
				   arch_xfeatures());
}

int arch_wait_stop(pid_t tid, int *status)
{
	for (;;) {
		pid_t p = waitpid(tid, status, __WALL);

		if (p == tid)
			break;
		if (p < 0 && errno != EINTR) {
			pr_perror("waitpid %d", tid);
			return neg_errno();
		}
	}
	if (!WIFSTOPPED(*status)) {
		pr_err("thread %d died while infected (status %#x)\n", tid, *status);
		return -ESRCH;
	}
	return 0;
}

/*
 * A signal-delivery stop while our code runs with every signal blocked:
 * a fault in our code (fatal for the injection), or a signal that cannot
 * be blocked (SIGSTOP and friends), absorbed now and sent again when the
 * thread is restored, so no stop is lost.
 */
static int absorb_signal(struct arch_thread_state *ts, int sig)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, ts->tid, NULL, &si))
		return neg_errno();
	if ((sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP ||
	     sig == SIGSYS) &&
	    si.si_code > 0) {
		struct user_regs_struct r;

		ptrace(PTRACE_GETREGS, ts->tid, NULL, &r);
		pr_err("thread %d: signal %d (code %d, addr %p) in injected code at %#llx\n",
		       ts->tid, sig, si.si_code, si.si_addr, r.rip);
		return -EFAULT;
	}
	if (sig > 0 && sig <= 64)
		ts->stolen_sigs |= 1ULL << (sig - 1);
	pr_debug("thread %d: signal %d held back until the cure\n", ts->tid, sig);
	return 0;
}

int arch_handle_async_stop(struct arch_thread_state *ts, int status)
{
	int sig = WSTOPSIG(status), ret;

	if (sig != (SIGTRAP | 0x80) && !(status >> 16)) {
		ret = absorb_signal(ts, sig);
		if (ret)
			return ret;
	}
	if (ptrace(PTRACE_CONT, ts->tid, NULL, 0))
		return neg_errno();
	return 0;
}

static int resume(struct arch_thread_state *ts, int req)
{
	fault_kill_point();
	if (ptrace(req, ts->tid, NULL, 0)) {
		pr_perror("ptrace(%d) %d", req, ts->tid);
		return neg_errno();
	}
	return 0;
}

/* The next stop of a resumed thread: STOP_SYSCALL (with @si), STOP_EVENT or STOP_AGAIN. */
static int wait_next(struct arch_thread_state *ts, struct __ptrace_syscall_info *si)
{
	int status, ret, sig;

	ret = arch_wait_stop(ts->tid, &status);
	if (ret)
		return ret;
	sig = WSTOPSIG(status);
	if (sig == (SIGTRAP | 0x80)) {
		if (ptrace(PTRACE_GET_SYSCALL_INFO, ts->tid, sizeof(*si), si) <= 0) {
			pr_perror("PTRACE_GET_SYSCALL_INFO %d", ts->tid);
			return neg_errno();
		}
		return STOP_SYSCALL;
	}
	if ((status >> 16) == PTRACE_EVENT_STOP)
		return STOP_EVENT;
	if (status >> 16)
		return STOP_AGAIN; /* another ptrace event: nothing of ours */
	ret = absorb_signal(ts, sig);
	return ret ? ret : STOP_AGAIN;
}

/* Resume with @req and return the next syscall or event stop, absorbing signal stops. */
static int next_stop(struct arch_thread_state *ts, int req, struct __ptrace_syscall_info *si)
{
	int ret;

	do {
		ret = resume(ts, req);
		if (!ret)
			ret = wait_next(ts, si);
	} while (ret == STOP_AGAIN);
	return ret;
}

static int set_regs(pid_t tid, struct user_regs_struct *r)
{
	fault_kill_point();
	if (ptrace(PTRACE_SETREGS, tid, NULL, r)) {
		pr_perror("PTRACE_SETREGS %d", tid);
		return neg_errno();
	}
	return 0;
}

static int block_all(pid_t tid)
{
	uint64_t all = ~0ULL;

	fault_kill_point();
	if (ptrace(PTRACE_SETSIGMASK, tid, sizeof(all), &all)) {
		pr_perror("PTRACE_SETSIGMASK %d", tid);
		return neg_errno();
	}
	return 0;
}

int arch_thread_restore(struct arch_thread_state *t)
{
	int ret = arch_thread_restore_start(t);

	return ret ? ret : arch_thread_restore_finish(t);
}

int arch_thread_restore_start(struct arch_thread_state *t)
{
	struct user_regs_struct r;
	int ret;

	/* Injected registers must not be "restarted" on the way out of this stop. */
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r))
		return neg_errno();
	r.orig_rax = (unsigned long)-1;
	ret = set_regs(t->tid, &r);
	if (ret)
		return ret;
	/*
	 * Reach a PTRACE_EVENT_STOP: from there the kernel applies its syscall
	 * restart logic to the registers we set, exactly as if we had never
	 * resumed the thread since the seize.
	 */
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, 0)) {
		pr_perror("PTRACE_INTERRUPT %d", t->tid);
		return neg_errno();
	}
	return resume(t, PTRACE_CONT);
}

int arch_thread_restore_finish(struct arch_thread_state *t)
{
	struct __ptrace_syscall_info si;
	struct iovec iov = { t->xstate, t->xsize };
	int ret, sig;

	for (;;) {
		ret = wait_next(t, &si);
		if (ret < 0)
			return ret;
		if (ret == STOP_EVENT)
			break;
		ret = resume(t, PTRACE_CONT);
		if (ret)
			return ret;
	}
	/* Sigmask before registers: a dumper dying in between leaves code that sigreturns. */
	fault_kill_point();
	if (ptrace(PTRACE_SETSIGMASK, t->tid, sizeof(t->sigmask), &t->sigmask) ||
	    ptrace(PTRACE_SETREGSET, t->tid, NT_X86_XSTATE, &iov)) {
		pr_perror("restoring sigmask/xstate of %d", t->tid);
		return neg_errno();
	}
	ret = set_regs(t->tid, &t->regs);
	if (ret)
		return ret;
	for (sig = 1; sig <= 64; sig++)
		if (t->stolen_sigs & (1ULL << (sig - 1)))
			kill(t->tid, sig);
	t->stolen_sigs = 0;
	return 0;
}

/* Start of the [vdso] mapping of @tid, 0 when there is none. */
static uint64_t find_vdso(pid_t tid)
{
	char path[64], line[512];
	_cleanup_fclose_ FILE *f = NULL;
	unsigned long start, end;

	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		if (len > 7 && !strcmp(line + len - 7, "[vdso]\n") &&
		    sscanf(line, "%lx-%lx", &start, &end) == 2)
			return start;
	}
	return 0;
}

static int poke_bytes(pid_t tid, uint64_t addr, const uint8_t *bytes, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += sizeof(long)) {
		long w;

		memcpy(&w, bytes + i, sizeof(w));
		fault_kill_point();
		if (ptrace(PTRACE_POKEDATA, tid, addr + i, w)) {
			pr_perror("PTRACE_POKEDATA %d at %#lx", tid, (unsigned long)(addr + i));
			return neg_errno();
		}
	}
	return 0;
}

static int peek_bytes(pid_t tid, uint64_t addr, uint8_t *bytes, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += sizeof(long)) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, tid, addr + i, NULL);
		if (errno) {
			pr_perror("PTRACE_PEEKDATA %d at %#lx", tid, (unsigned long)(addr + i));
			return neg_errno();
		}
		memcpy(bytes + i, &w, sizeof(w));
	}
	return 0;
}

/*
 * The trampoline goes over e_ident[7..15] of the vDSO's ELF header (OSABI,
 * ABIVERSION, padding): bytes nobody reads after startup, so even a patch
 * the dumper never undoes is harmless. PTRACE_POKEDATA writes through the
 * r-x mapping (FOLL_FORCE, copy-on-write): /proc/PID/maps does not change.
 * Without a vDSO, the thread's own code at rip is borrowed, CRIU's way: a
 * dumper dying before the bytes go back leaves that code broken.
 */
static int place_trampoline(struct arch_injector *inj, long known)
{
	uint64_t vdso = known == ARCH_VDSO_LOOKUP ? find_vdso(inj->tid) : (uint64_t)known;
	uint8_t patched[sizeof(inj->saved)], cur[sizeof(inj->saved)];
	size_t off;
	int ret;

	if (vdso) {
		inj->patch = vdso;
		off = 7;
	} else {
		pr_warn("thread %d has no vDSO: injecting over its own code at %#llx\n", inj->tid,
			inj->ts->regs.rip);
		inj->patch = inj->ts->regs.rip & ~7ULL;
		off = inj->ts->regs.rip - inj->patch;
		inj->own_code = true;
	}
	ret = peek_bytes(inj->tid, inj->patch, cur, sizeof(cur));
	if (ret)
		return ret;
	if (vdso && memcmp(cur, ELFMAG, SELFMAG)) {
		pr_err("vDSO of %d at %#lx has no ELF header\n", inj->tid, (unsigned long)vdso);
		return -ENOEXEC;
	}
	memcpy(inj->saved, cur, sizeof(cur));
	/*
	 * The kernel's vDSO has zeros there: they go back at the end, whatever a
	 * dumper that died left (the whole trampoline, or half of it when it died
	 * between the two words of putting the bytes back: infect-kill.sh).
	 */
	if (vdso)
		memset(inj->saved + off, 0, sizeof(trampoline));
	memcpy(patched, inj->saved, sizeof(patched));
	memcpy(patched + off, trampoline, sizeof(trampoline));
	inj->code = inj->patch + off;
	if (!memcmp(patched, cur, sizeof(patched))) {
		/* in place already (left by a dumper that died) */
		inj->patched = vdso != 0;
		return 0;
	}
	ret = poke_bytes(inj->tid, inj->patch, patched, sizeof(patched));
	if (ret)
		return ret;
	inj->patched = true;
	return 0;
}

int arch_injector_init(struct arch_injector *inj, struct arch_thread_state *ts)
{
	return arch_injector_init_at(inj, ts, ARCH_VDSO_LOOKUP);
}

int arch_injector_init_at(struct arch_injector *inj, struct arch_thread_state *ts, long vdso)
{
	size_t fsize = arch_thread_frame_size(ts);
	_cleanup_free_ void *buf = calloc(1, fsize);
	struct iovec local, remote;
	int ret;

	memset(inj, 0, sizeof(*inj));
	inj->tid = ts->tid;
	inj->ts = ts;
	if (!buf)
		return -ENOMEM;
	/* Below the red zone: memory the ABI lets a signal handler clobber at any time. */
	inj->frame = (ts->resume.rsp - RED_ZONE - fsize) & ~(uint64_t)(XSTATE_ALIGN - 1);
	ret = arch_thread_frame(ts, inj->frame, buf);
	if (ret)
		return ret;
	fault_kill_point();
	local = (struct iovec){ buf, fsize };
	remote = (struct iovec){ (void *)inj->frame, fsize };
	if (process_vm_writev(ts->tid, &local, 1, &remote, 1, 0) != (ssize_t)fsize) {
		pr_perror("writing the sigreturn frame below the stack of %d at %#lx", ts->tid,
			  (unsigned long)inj->frame);
		return neg_errno();
	}
	return place_trampoline(inj, vdso);
}

int arch_injector_lift(struct arch_injector *inj)
{
	if (!inj->own_code)
		return 0;
	return arch_injector_fini(inj);
}

int arch_injector_place(struct arch_injector *inj)
{
	uint8_t patched[sizeof(inj->saved)];
	int ret;

	if (!inj->own_code || inj->patched)
		return 0;
	memcpy(patched, inj->saved, sizeof(patched));
	memcpy(patched + (inj->code - inj->patch), trampoline, sizeof(trampoline));
	ret = poke_bytes(inj->tid, inj->patch, patched, sizeof(patched));
	if (!ret)
		inj->patched = true;
	return ret;
}

int arch_injector_fini(struct arch_injector *inj)
{
	int ret;

	if (!inj->patched)
		return 0;
	ret = poke_bytes(inj->tid, inj->patch, inj->saved, sizeof(inj->saved));
	if (!ret)
		inj->patched = false;
	return ret;
}

static int wait_syscall(struct arch_thread_state *ts, int req, uint8_t op,
			struct __ptrace_syscall_info *si)
{
	int ret;

	for (;;) {
		ret = next_stop(ts, req, si);
		if (ret < 0)
			return ret;
		if (ret == STOP_SYSCALL && si->op == op)
			return 0;
		req = PTRACE_SYSCALL;
	}
}

int arch_inject_syscall_start(struct arch_injector *inj, long nr, const unsigned long args[6])
{
	struct user_regs_struct r = inj->ts->resume;
	int err;

	r.rip = inj->code;
	r.rsp = arch_sigframe_rsp(inj->frame);
	r.rax = nr;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	r.orig_rax = (unsigned long)-1;
	/* Registers first: dying before the mask is set still ends in sigreturn. */
	err = set_regs(inj->tid, &r);
	if (!err)
		err = block_all(inj->tid);
	if (!err)
		err = resume(inj->ts, PTRACE_SYSCALL);
	return err;
}

int arch_inject_syscall_finish(struct arch_injector *inj, long nr, long *ret)
{
	int err = arch_inject_syscall_entered(inj, nr);

	return err ?: arch_inject_syscall_exited(inj, ret);
}

/* The thread already resumed: on with PTRACE_SYSCALL until a syscall stop of @op. */
static int wait_syscall_op(struct arch_thread_state *ts, uint8_t op,
			   struct __ptrace_syscall_info *si)
{
	int err;

	for (;;) {
		err = wait_next(ts, si);
		if (err < 0)
			return err;
		if (err == STOP_SYSCALL && si->op == op)
			return 0;
		err = resume(ts, PTRACE_SYSCALL);
		if (err)
			return err;
	}
}

int arch_inject_syscall_entered(struct arch_injector *inj, long nr)
{
	struct __ptrace_syscall_info si;
	int err = wait_syscall_op(inj->ts, PTRACE_SYSCALL_INFO_ENTRY, &si);

	if (err)
		return err;
	if ((long)si.entry.nr != nr || si.instruction_pointer != inj->code + 2) {
		pr_err("thread %d entered syscall %llu at %#llx, not %ld at %#lx\n", inj->tid,
		       (unsigned long long)si.entry.nr, (unsigned long long)si.instruction_pointer,
		       nr, (unsigned long)inj->code + 2);
		return -EIO;
	}
	return resume(inj->ts, PTRACE_SYSCALL);
}

int arch_inject_syscall_exited(struct arch_injector *inj, long *ret)
{
	struct __ptrace_syscall_info si;
	int err = wait_syscall_op(inj->ts, PTRACE_SYSCALL_INFO_EXIT, &si);

	if (!err)
		*ret = si.exit.rval;
	return err;
}

int arch_inject_syscall(struct arch_injector *inj, long nr, const unsigned long args[6], long *ret)
{
	int err = arch_inject_syscall_start(inj, nr, args);

	return err ? err : arch_inject_syscall_finish(inj, nr, ret);
}

int arch_start_code(struct arch_thread_state *ts, uint64_t rip, uint64_t rsp, uint64_t a0,
		    uint64_t a1, uint64_t a2, bool run)
{
	struct user_regs_struct r = ts->resume;
	int ret;

	r.rip = rip;
	r.rsp = rsp;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.orig_rax = (unsigned long)-1;
	r.eflags &= ~0x400UL; /* DF clear, as the ABI wants at a call */
	ret = set_regs(ts->tid, &r);
	if (!ret)
		ret = block_all(ts->tid);
	if (!ret && run && ptrace(PTRACE_CONT, ts->tid, NULL, 0))
		ret = neg_errno();
	return ret;
}

int arch_blob_run(struct arch_thread_state *ts)
{
	return resume(ts, PTRACE_CONT);
}

int arch_blob_poll(struct arch_thread_state *ts)
{
	int status;
	pid_t p = waitpid(ts->tid, &status, __WALL | WNOHANG);

	if (!p || (p < 0 && errno == EINTR))
		return 0;
	if (p < 0) {
		pr_perror("waitpid %d", ts->tid);
		return neg_errno();
	}
	if (!WIFSTOPPED(status)) {
		pr_err("thread %d died while infected (status %#x)\n", ts->tid, status);
		return -ESRCH;
	}
	return arch_handle_async_stop(ts, status);
}

int arch_blob_halt(struct arch_thread_state *ts)
{
	fault_kill_point();
	if (ptrace(PTRACE_INTERRUPT, ts->tid, NULL, 0)) {
		pr_perror("PTRACE_INTERRUPT %d", ts->tid);
		return neg_errno();
	}
	return 0;
}

int arch_step_blob_start(struct arch_thread_state *ts)
{
	ts->skipping = false;
	ts->last_nr = -1;
	return resume(ts, PTRACE_SYSCALL);
}

int arch_step_blob_next(struct arch_thread_state *ts, const struct arch_blob_range *r, long nr,
			long *rval)
{
	struct __ptrace_syscall_info si;
	struct user_regs_struct regs;
	int ret = wait_next(ts, &si);

	if (ret < 0)
		return ret;
	if (ret == STOP_SYSCALL && ts->skipping && si.op == PTRACE_SYSCALL_INFO_EXIT) {
		ts->skipping = false;
		return 1;
	}
	if (ret == STOP_SYSCALL && !ts->skipping && si.op == PTRACE_SYSCALL_INFO_EXIT && nr >= 0 &&
	    ts->last_nr == nr) {
		*rval = si.exit.rval;
		return 2;
	}
	if (ret == STOP_SYSCALL && !ts->skipping && si.op == PTRACE_SYSCALL_INFO_ENTRY) {
		ts->last_nr = (long)si.entry.nr;
		if (si.instruction_pointer < r->lo || si.instruction_pointer > r->hi) {
			pr_err("thread %d left the blob: syscall %llu at %#llx\n", ts->tid,
			       (unsigned long long)si.entry.nr,
			       (unsigned long long)si.instruction_pointer);
			return -EIO;
		}
		if (si.entry.nr == RT_SIGRETURN_NR && si.instruction_pointer >= r->sr_lo &&
		    si.instruction_pointer <= r->sr_hi) {
			/* orig_rax = -1 at the entry stop: the kernel skips the syscall. */
			if (ptrace(PTRACE_GETREGS, ts->tid, NULL, &regs))
				return neg_errno();
			regs.orig_rax = (unsigned long)-1;
			ret = set_regs(ts->tid, &regs);
			if (ret)
				return ret;
			ts->skipping = true;
		}
	}
	ret = resume(ts, PTRACE_SYSCALL);
	return ret ? ret : 0;
}

int arch_step_blob(struct arch_thread_state *ts, const struct arch_blob_range *r, long nr,
		   long *rval)
{
	struct __ptrace_syscall_info si;
	struct user_regs_struct regs;
	long last = -1;
	int ret;

	for (;;) {
		ret = next_stop(ts, PTRACE_SYSCALL, &si);
		if (ret < 0)
			return ret;
		if (ret != STOP_SYSCALL)
			continue;
		if (si.op == PTRACE_SYSCALL_INFO_EXIT && nr >= 0 && last == nr) {
			*rval = si.exit.rval;
			return 0;
		}
		if (si.op != PTRACE_SYSCALL_INFO_ENTRY)
			continue;
		if (si.instruction_pointer < r->lo || si.instruction_pointer > r->hi) {
			pr_err("thread %d left the blob: syscall %llu at %#llx\n", ts->tid,
			       (unsigned long long)si.entry.nr,
			       (unsigned long long)si.instruction_pointer);
			return -EIO;
		}
		last = (long)si.entry.nr;
		if (si.entry.nr == RT_SIGRETURN_NR && si.instruction_pointer >= r->sr_lo &&
		    si.instruction_pointer <= r->sr_hi)
			break;
	}
	/* orig_rax = -1 at the entry stop: the kernel skips the syscall. */
	if (ptrace(PTRACE_GETREGS, ts->tid, NULL, &regs))
		return neg_errno();
	regs.orig_rax = (unsigned long)-1;
	ret = set_regs(ts->tid, &regs);
	if (!ret)
		ret = wait_syscall(ts, PTRACE_SYSCALL, PTRACE_SYSCALL_INFO_EXIT, &si);
	return ret ? ret : 1;
}
