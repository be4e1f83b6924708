// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel feature probes. Each probe really uses the interface (a config file
 * or the kernel version proves nothing: distributions backport and disable
 * things), is quick, and runs in a forked child whenever it could disturb the
 * caller (unshare, clear_refs, PR_SET_MM). Absence is a result, reported with
 * the reason in the detail text; only "could not probe at all" is an error.
 */
#define LOG_PREFIX "kerndat: "
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "compat.h"
#include "kerndat.h"
#include "kerndat-int.h"
#include "log.h"
#include "util.h"

void kd_set(struct kerndat *kd, enum kd_feature id, bool present, const char *fmt, ...)
{
	struct kd_result *r = &kd->res[id];
	va_list ap;

	r->probed = true;
	r->present = present;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	pr_debug("%s: %s (%s)\n", kd_feature(id)->name, present ? "present" : "absent", r->detail);
}

void kd_kill_wait(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

struct child_report {
	int ret;
	char detail[KD_DETAIL_MAX];
};

int kd_run_in_child(kd_child_fn fn, unsigned long arg, char *detail)
{
	struct child_report rep;
	_cleanup_close_ int rfd = -1;
	int p[2], status = 0, err;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return neg_errno();
	pid = fork();
	if (pid < 0) {
		err = neg_errno();
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (pid == 0) {
		close(p[0]);
		memset(&rep, 0, sizeof(rep));
		rep.ret = fn(arg, rep.detail);
		_exit(write_all(p[1], &rep, sizeof(rep)) ? 1 : 0);
	}
	close(p[1]);
	rfd = p[0];
	err = read_all(rfd, &rep, sizeof(rep));
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (err) {
		snprintf(detail, KD_DETAIL_MAX, "probe child died (wait status 0x%x)", status);
		return -ECHILD;
	}
	rep.detail[KD_DETAIL_MAX - 1] = '\0';
	memcpy(detail, rep.detail, KD_DETAIL_MAX);
	return rep.ret;
}

/* ---- ptrace: one seized child serves the whole group ---- */

/* A child that blocks SIGUSR1 (so a queued one stays pending) and sleeps. */
static pid_t ptrace_child_fork(void)
{
	int p[2], err;
	char c = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return neg_errno();
	pid = fork();
	if (pid == 0) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	err = pid < 0 ? neg_errno() : 0;
	close(p[1]);
	/* Wait until the child has blocked SIGUSR1. */
	if (!err && read(p[0], &c, 1) != 1) {
		err = -ECHILD;
		kd_kill_wait(pid);
	}
	close(p[0]);
	return err ? err : pid;
}

static bool ptrace_probe_interrupt(struct kerndat *kd, pid_t pid)
{
	int status = 0;

	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0)) {
		kd_set(kd, KD_PTRACE_INTERRUPT, false, "PTRACE_INTERRUPT: %m");
		return false;
	}
	if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status) ||
	    (status >> 16) != PTRACE_EVENT_STOP) {
		kd_set(kd, KD_PTRACE_INTERRUPT, false, "no PTRACE_EVENT_STOP (wait status 0x%x)",
		       status);
		return false;
	}
	kd_set(kd, KD_PTRACE_INTERRUPT, true, "child stopped in PTRACE_EVENT_STOP");
	return true;
}

static void ptrace_probe_peeksiginfo(struct kerndat *kd, pid_t pid)
{
	struct cr_ptrace_peeksiginfo_args a = { .off = 0,
						.flags = PTRACE_PEEKSIGINFO_SHARED,
						.nr = 1 };
	union sigval v = { .sival_int = 0x4b44 };
	siginfo_t si;
	long n;

	/* Blocked by the child, so it stays queued for us to peek. */
	if (sigqueue(pid, SIGUSR1, v)) {
		kd_set(kd, KD_PTRACE_PEEKSIGINFO, false, "sigqueue: %m");
		return;
	}
	memset(&si, 0, sizeof(si));
	n = ptrace(PTRACE_PEEKSIGINFO, pid, &a, &si);
	if (n < 0)
		kd_set(kd, KD_PTRACE_PEEKSIGINFO, false, "PTRACE_PEEKSIGINFO: %m");
	else if (n != 1 || si.si_signo != SIGUSR1 || si.si_value.sival_int != v.sival_int)
		kd_set(kd, KD_PTRACE_PEEKSIGINFO, false, "peeked %ld signals, not the queued one",
		       n);
	else
		kd_set(kd, KD_PTRACE_PEEKSIGINFO, true,
		       "read back a queued SIGUSR1 with its value");
}

static void ptrace_probe_sigmask(struct kerndat *kd, pid_t pid)
{
	uint64_t mask = 0, set, back = 0;

	if (ptrace(PTRACE_GETSIGMASK, pid, sizeof(mask), &mask)) {
		kd_set(kd, KD_PTRACE_SIGMASK, false, "PTRACE_GETSIGMASK: %m");
		return;
	}
	if (!(mask & (1ULL << (SIGUSR1 - 1)))) {
		kd_set(kd, KD_PTRACE_SIGMASK, false, "mask 0x%" PRIx64 " lacks SIGUSR1", mask);
		return;
	}
	set = mask | (1ULL << (SIGUSR2 - 1));
	if (ptrace(PTRACE_SETSIGMASK, pid, sizeof(set), &set) ||
	    ptrace(PTRACE_GETSIGMASK, pid, sizeof(back), &back)) {
		kd_set(kd, KD_PTRACE_SIGMASK, false, "PTRACE_SETSIGMASK: %m");
		return;
	}
	if (back != set)
		kd_set(kd, KD_PTRACE_SIGMASK, false, "set 0x%" PRIx64 ", read 0x%" PRIx64, set,
		       back);
	else
		kd_set(kd, KD_PTRACE_SIGMASK, true,
		       "read 0x%" PRIx64 ", set and read back 0x%" PRIx64, mask, set);
}

static void ptrace_probe_rseq(struct kerndat *kd, pid_t pid)
{
	struct cr_ptrace_rseq_configuration c;
	long n;

	memset(&c, 0, sizeof(c));
	n = ptrace(PTRACE_GET_RSEQ_CONFIGURATION, pid, sizeof(c), &c);
	if (n < 0)
		kd_set(kd, KD_PTRACE_RSEQ, false, "PTRACE_GET_RSEQ_CONFIGURATION: %m");
	else if (!c.rseq_abi_pointer)
		/* The interface works; glibc was told not to register (glibc.pthread.rseq=0). */
		kd_set(kd, KD_PTRACE_RSEQ, true, "works; the child has no rseq area registered");
	else
		kd_set(kd, KD_PTRACE_RSEQ, true, "child's rseq area: %u bytes, signature 0x%x",
		       c.rseq_abi_size, c.signature);
}

/* Resume to the next syscall stop: with TRACESYSGOOD it reports SIGTRAP | 0x80. */
static void ptrace_probe_sysgood(struct kerndat *kd, pid_t pid)
{
	int status = 0;

	if (ptrace(PTRACE_SYSCALL, pid, 0, 0)) {
		kd_set(kd, KD_PTRACE_SYSGOOD, false, "PTRACE_SYSCALL: %m");
		return;
	}
	if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != (SIGTRAP | 0x80))
		kd_set(kd, KD_PTRACE_SYSGOOD, false, "no syscall stop (wait status 0x%x)", status);
	else
		kd_set(kd, KD_PTRACE_SYSGOOD, true, "syscall stop reported as SIGTRAP|0x80");
}

static int probe_ptrace(struct kerndat *kd, const struct kd_feature_desc *f __unused)
{
	static const enum kd_feature after_stop[] = { KD_PTRACE_PEEKSIGINFO, KD_PTRACE_SIGMASK,
						      KD_PTRACE_RSEQ, KD_PTRACE_SYSGOOD };
	pid_t pid = ptrace_child_fork();
	unsigned int i;

	if (pid < 0)
		return pid;
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACESYSGOOD)) {
		kd_set(kd, KD_PTRACE_SEIZE, false, "PTRACE_SEIZE: %m");
		kd_set(kd, KD_PTRACE_INTERRUPT, false, "needs ptrace-seize");
	} else {
		kd_set(kd, KD_PTRACE_SEIZE, true, "seized a forked child");
		if (ptrace_probe_interrupt(kd, pid)) {
			ptrace_probe_peeksiginfo(kd, pid);
			ptrace_probe_sigmask(kd, pid);
			ptrace_probe_rseq(kd, pid);
			ptrace_probe_sysgood(kd, pid);
		}
	}
	for (i = 0; i < ARRAY_SIZE(after_stop); i++)
		if (!kd->res[after_stop[i]].probed)
			kd_set(kd, after_stop[i], false, "needs a stopped tracee");
	kd_kill_wait(pid);
	return 0;
}

/* ---- process creation and inspection ---- */

static long read_sysctl(const char *path, long dflt)
{
	_cleanup_free_ char *s = read_file_at(AT_FDCWD, path, NULL);
	long v;

	if (!s || parse_long(s, &v))
		return dflt;
	return v;
}

/*
 * clone3() with set_tid in our own pid namespace, as restore does for each
 * task. A pid that looks free may be taken by the time we ask (EEXIST, or a
 * pgid/sid still holding it), so try a few.
 */
static int probe_clone3(struct kerndat *kd, const struct kd_feature_desc *f)
{
	long pid_max = read_sysctl("/proc/sys/kernel/pid_max", 32768);
	long last = read_sysctl("/proc/sys/kernel/ns_last_pid", getpid());
	int try, err = -EEXIST;

	for (try = 0; try < 16; try++) {
		pid_t want = 300 + (last + 1000 + try * 7919L) % (pid_max - 300);
		struct cr_clone_args a;
		long pid;

		if (kill(want, 0) == 0 || errno != ESRCH)
			continue;
		memset(&a, 0, sizeof(a));
		a.exit_signal = SIGCHLD;
		a.set_tid = (uintptr_t)&want;
		a.set_tid_size = 1;
		pid = syscall(__NR_clone3, &a, CR_CLONE_ARGS_SIZE_VER1);
		if (pid == 0)
			_exit(0);
		if (pid < 0) {
			err = neg_errno();
			if (err == -EEXIST)
				continue;
			break;
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (pid != want) {
			kd_set(kd, f->id, false, "asked for pid %d, got %ld", want, pid);
			return 0;
		}
		kd_set(kd, f->id, true, "forked a child at the chosen pid %d", want);
		return 0;
	}
	errno = -err;
	kd_set(kd, f->id, false, "clone3: %m");
	return 0;
}

/* Fields 26-28 and 45-51 of /proc/self/stat, as PR_SET_MM_MAP wants them. */
static int fill_mm_map(struct prctl_mm_map *m)
{
	_cleanup_free_ char *stat = read_file_at(AT_FDCWD, "/proc/self/stat", NULL);
	unsigned long long v[52];
	char *p = stat ? strrchr(stat, ')') : NULL;
	int field;

	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	p += 3; /* past ") S", the state; strtoull() skips the blank before each field */
	for (field = 4; field <= 51; field++) {
		char *end;

		v[field] = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;
		p = end;
	}
	memset(m, 0, sizeof(*m));
	m->start_code = v[26];
	m->end_code = v[27];
	m->start_stack = v[28];
	m->start_data = v[45];
	m->end_data = v[46];
	m->start_brk = v[47];
	m->arg_start = v[48];
	m->arg_end = v[49];
	m->env_start = v[50];
	m->env_end = v[51];
	m->brk = syscall(SYS_brk, 0);
	m->exe_fd = (uint32_t)-1; /* keep /proc/self/exe */
	return 0;
}

/* In a child: set our own mm fields to the values they already have. */
static int mm_map_child(unsigned long arg __unused, char *detail)
{
	struct prctl_mm_map m;
	unsigned int size = 0;
	int err;

	if (prctl(PR_SET_MM, PR_SET_MM_MAP_SIZE, (unsigned long)&size, 0, 0)) {
		err = neg_errno();
		snprintf(detail, KD_DETAIL_MAX, "PR_SET_MM_MAP_SIZE: %m");
		return err;
	}
	if (size != sizeof(m)) {
		snprintf(detail, KD_DETAIL_MAX, "kernel struct prctl_mm_map is %u bytes, not %zu",
			 size, sizeof(m));
		return -EPROTO;
	}
	err = fill_mm_map(&m);
	if (err) {
		snprintf(detail, KD_DETAIL_MAX, "cannot parse /proc/self/stat");
		return err;
	}
	if (prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&m, sizeof(m), 0)) {
		err = neg_errno();
		snprintf(detail, KD_DETAIL_MAX, "PR_SET_MM_MAP: %m");
		return err;
	}
	snprintf(detail, KD_DETAIL_MAX, "re-set a child's mm fields (struct of %u bytes)", size);
	return 0;
}

static int probe_mm_map(struct kerndat *kd, const struct kd_feature_desc *f)
{
	char detail[KD_DETAIL_MAX] = "";
	int err = kd_run_in_child(mm_map_child, 0, detail);

	kd_set(kd, f->id, err == 0, "%s", detail);
	return 0;
}

static int probe_kcmp(struct kerndat *kd, const struct kd_feature_desc *f)
{
	_cleanup_close_ int a = open("/dev/null", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int b = a < 0 ? -1 : fcntl(a, F_DUPFD_CLOEXEC, 0);
	_cleanup_close_ int c = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t me = getpid();
	long same, other;

	if (a < 0 || b < 0 || c < 0)
		return neg_errno();
	same = syscall(SYS_kcmp, me, me, KCMP_FILE, a, b);
	if (same < 0) {
		kd_set(kd, f->id, false, "kcmp: %m");
		return 0;
	}
	other = syscall(SYS_kcmp, me, me, KCMP_FILE, a, c);
	if (same != 0 || other <= 0)
		kd_set(kd, f->id, false, "KCMP_FILE gave %ld for a dup, %ld for another open", same,
		       other);
	else
		kd_set(kd, f->id, true, "KCMP_FILE tells a dup'ed fd from a second open");
	return 0;
}

static int probe_memfd(struct kerndat *kd, const struct kd_feature_desc *f)
{
	_cleanup_close_ int fd = memfd_create("criu-like-check", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	_cleanup_close_ int nx = -1;
	char buf[4] = "";

	if (fd < 0) {
		kd_set(kd, f->id, false, "memfd_create: %m");
		return 0;
	}
	if (write_all(fd, "ckpt", 4) || pread(fd, buf, 4, 0) != 4 || memcmp(buf, "ckpt", 4) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE)) {
		kd_set(kd, f->id, false, "memfd write/read/seal: %m");
		return 0;
	}
	nx = memfd_create("criu-like-check", MFD_CLOEXEC | MFD_NOEXEC_SEAL);
	kd_set(kd, f->id, true, "written, read back, sealed; MFD_NOEXEC_SEAL (6.3) %s",
	       nx >= 0 ? "works" : "refused");
	return 0;
}

static int probe_pidfd(struct kerndat *kd, const struct kd_feature_desc *f __unused)
{
	_cleanup_close_ int pidfd = syscall(__NR_pidfd_open, getpid(), 0);
	_cleanup_close_ int copy = -1;
	struct stat a, b;
	int p[2];

	if (pidfd < 0) {
		kd_set(kd, KD_PIDFD_OPEN, false, "pidfd_open: %m");
		kd_set(kd, KD_PIDFD_GETFD, false, "needs pidfd_open");
		return 0;
	}
	kd_set(kd, KD_PIDFD_OPEN, true, "opened a pidfd of this process");
	if (pipe2(p, O_CLOEXEC))
		return neg_errno();
	copy = syscall(__NR_pidfd_getfd, pidfd, p[0], 0);
	if (copy < 0)
		kd_set(kd, KD_PIDFD_GETFD, false, "pidfd_getfd: %m");
	else if (fstat(copy, &a) || fstat(p[0], &b) || a.st_ino != b.st_ino)
		kd_set(kd, KD_PIDFD_GETFD, false, "the copied fd is another file");
	else
		kd_set(kd, KD_PIDFD_GETFD, true, "copied a pipe fd through a pidfd");
	close(p[0]);
	close(p[1]);
	return 0;
}

/* Read a buffer out of a forked child after changing our own copy. */
static int probe_process_vm_readv(struct kerndat *kd, const struct kd_feature_desc *f)
{
	static char buf[64];
	char got[sizeof(buf)];
	struct iovec local = { got, sizeof(got) }, remote = { buf, sizeof(buf) };
	ssize_t n;
	pid_t pid;

	memset(buf, 0x5a, sizeof(buf));
	pid = fork();
	if (pid < 0)
		return neg_errno();
	if (pid == 0) {
		for (;;)
			pause();
	}
	memset(buf, 0, sizeof(buf));
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		kd_set(kd, f->id, false, "process_vm_readv: %m");
	else if (n != sizeof(got) || got[0] != 0x5a || got[sizeof(got) - 1] != 0x5a)
		kd_set(kd, f->id, false, "read %zd bytes, not the child's copy", n);
	else
		kd_set(kd, f->id, true, "read a child's memory");
	kd_kill_wait(pid);
	return 0;
}

static int probe_vmsplice(struct kerndat *kd, const struct kd_feature_desc *f)
{
	char *page = mmap(NULL, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			  0);
	char back[64];
	struct iovec iov = { page, PAGE_SIZE };
	int p[2], err = 0;
	ssize_t n;

	if (page == MAP_FAILED)
		return neg_errno();
	if (pipe2(p, O_CLOEXEC)) {
		err = neg_errno();
		goto unmap;
	}
	memset(page, 0xa5, PAGE_SIZE);
	n = vmsplice(p[1], &iov, 1, 0);
	if (n != (ssize_t)PAGE_SIZE)
		kd_set(kd, f->id, false, "vmsplice: %s", n < 0 ? strerror(errno) : "short");
	else if (read(p[0], back, sizeof(back)) != sizeof(back) || (unsigned char)back[0] != 0xa5)
		kd_set(kd, f->id, false, "the pipe does not hold the page");
	else
		kd_set(kd, f->id, true, "spliced a page into a pipe");
	close(p[0]);
	close(p[1]);
unmap:
	munmap(page, PAGE_SIZE);
	return err;
}

/* ---- the feature table ---- */

#define FEAT(id_, name_, need_, maj_, min_, probe_, arg_, what_) \
	[id_] = { .id = id_,                                     \
		  .name = name_,                                 \
		  .what = what_,                                 \
		  .need = need_,                                 \
		  .min = { maj_, min_, 0 },                      \
		  .probe = probe_,                               \
		  .arg = arg_ }

static const struct kd_feature_desc features[KD__MAX] = {
	FEAT(KD_PTRACE_SEIZE, "ptrace-seize", KD_REQUIRED, 3, 4, probe_ptrace, 0,
	     "attach to tasks without stopping them (dump)"),
	FEAT(KD_PTRACE_INTERRUPT, "ptrace-interrupt", KD_REQUIRED, 3, 4, probe_ptrace, 0,
	     "stop seized tasks (dump)"),
	FEAT(KD_PTRACE_PEEKSIGINFO, "ptrace-peeksiginfo", KD_REQUIRED, 3, 10, probe_ptrace, 0,
	     "save pending signals (dump)"),
	FEAT(KD_PTRACE_SIGMASK, "ptrace-sigmask", KD_REQUIRED, 3, 11, probe_ptrace, 0,
	     "save and restore blocked signals (dump)"),
	FEAT(KD_PTRACE_RSEQ, "ptrace-rseq", KD_USED, 5, 13, probe_ptrace, 0,
	     "save glibc's rseq registration (dump)"),
	FEAT(KD_PTRACE_SYSGOOD, "ptrace-sysgood", KD_EXTRA, 2, 6, probe_ptrace, 0,
	     "tell syscall stops from signal stops"),
	FEAT(KD_CLONE3_SET_TID, "clone3-set-tid", KD_REQUIRED, 5, 5, probe_clone3, 0,
	     "fork tasks with their saved pids (restore)"),
	FEAT(KD_PR_SET_MM_MAP, "pr-set-mm-map", KD_REQUIRED, 3, 18, probe_mm_map, 0,
	     "restore mm fields: brk, args, env, auxv (restore)"),
	FEAT(KD_KCMP, "kcmp", KD_REQUIRED, 3, 5, probe_kcmp, 0,
	     "find files and fd tables shared between tasks (dump)"),
	FEAT(KD_MEMFD, "memfd", KD_REQUIRED, 3, 17, probe_memfd, 0,
	     "restore memfds and shared anonymous memory (restore)"),
	FEAT(KD_PIDFD_OPEN, "pidfd-open", KD_USED, 5, 3, probe_pidfd, 0,
	     "wait for and signal tasks without pid reuse races"),
	FEAT(KD_PIDFD_GETFD, "pidfd-getfd", KD_EXTRA, 5, 6, probe_pidfd, 0,
	     "copy a task's fds without a parasite"),
	FEAT(KD_PROCESS_VM_READV, "process-vm-readv", KD_REQUIRED, 3, 2, probe_process_vm_readv, 0,
	     "read task memory from outside (dump)"),
	FEAT(KD_VMSPLICE, "vmsplice", KD_REQUIRED, 2, 6, probe_vmsplice, 0,
	     "move pages to the images without copies (dump)"),
	FEAT(KD_PROC_MAPS, "proc-maps", KD_REQUIRED, 2, 6, kd_probe_proc_maps, 0,
	     "list memory areas from /proc/PID/smaps (dump)"),
	FEAT(KD_PAGEMAP_SCAN, "pagemap-scan", KD_REQUIRED, 6, 7, kd_probe_pagemap_scan, 0,
	     "find present pages in one ioctl (dump)"),
	FEAT(KD_PROCMAP_QUERY, "procmap-query", KD_USED, 6, 11, kd_probe_procmap_query, 0,
	     "look up single memory areas fast (dump)"),
	FEAT(KD_BPF_VMA_ITER, "bpf-vma-iter", KD_USED, 6, 1, kd_probe_bpf_vma_iter, 0,
	     "VMA flags without smaps' page walk (dump of much memory, --snapshot)"),
	FEAT(KD_BPF_TASK_ITER, "bpf-task-iter", KD_USED, 6, 1, kd_probe_bpf_task_iter, 0,
	     "what a process's threads share in one read (dump of many threads)"),
	FEAT(KD_UFFD, "userfaultfd", KD_USED, 4, 3, kd_probe_uffd, 0,
	     "serve missing pages on demand (lazy-pages)"),
	FEAT(KD_UFFD_WP_ASYNC, "uffd-wp-async", KD_USED, 6, 7, kd_probe_uffd_wp_async, 0,
	     "track written pages without faults to us (pre-dump)"),
	FEAT(KD_DIRTY_TRACKING, "dirty-tracking", KD_USED, 6, 7, kd_probe_uffd_wp_async, 0,
	     "uffd-wp + PAGEMAP_SCAN written pages (pre-dump, migrate)"),
	FEAT(KD_SOFT_DIRTY, "soft-dirty", KD_USED, 3, 11, kd_probe_soft_dirty, 0,
	     "old dirty tracking (unused: uffd-wp replaces it)"),
	FEAT(KD_TCP_REPAIR, "tcp-repair", KD_USED, 3, 5, kd_probe_tcp_repair, 0,
	     "save and restore live TCP connections (--tcp-established)"),
	FEAT(KD_SOCK_DIAG_UNIX, "sock-diag-unix", KD_USED, 3, 3, kd_probe_sock_diag, AF_UNIX,
	     "list unix sockets and their peers (dump)"),
	FEAT(KD_SOCK_DIAG_INET, "sock-diag-inet", KD_USED, 3, 3, kd_probe_sock_diag, AF_INET,
	     "list TCP/UDP sockets (dump)"),
	FEAT(KD_NS_MNT, "ns-mnt", KD_USED, 2, 4, kd_probe_ns, CLONE_NEWNS, "mount namespaces"),
	FEAT(KD_NS_UTS, "ns-uts", KD_USED, 2, 6, kd_probe_ns, CLONE_NEWUTS, "UTS namespaces"),
	FEAT(KD_NS_IPC, "ns-ipc", KD_USED, 2, 6, kd_probe_ns, CLONE_NEWIPC, "IPC namespaces"),
	FEAT(KD_NS_NET, "ns-net", KD_USED, 2, 6, kd_probe_ns, CLONE_NEWNET, "network namespaces"),
	FEAT(KD_NS_PID, "ns-pid", KD_USED, 2, 6, kd_probe_ns, CLONE_NEWPID, "pid namespaces"),
	FEAT(KD_NS_USER, "ns-user", KD_USED, 3, 8, kd_probe_ns, CLONE_NEWUSER, "user namespaces"),
	FEAT(KD_NS_CGROUP, "ns-cgroup", KD_USED, 4, 6, kd_probe_ns, CLONE_NEWCGROUP,
	     "cgroup namespaces"),
	FEAT(KD_NS_TIME, "ns-time", KD_USED, 5, 6, kd_probe_ns, CLONE_NEWTIME,
	     "time namespaces (keep monotonic clocks across hosts)"),
	FEAT(KD_TIMENS_OFFSETS, "timens-offsets", KD_USED, 5, 6, kd_probe_timens_offsets, 0,
	     "set clock offsets of a restored time namespace"),
	FEAT(KD_VDSO, "vdso-layout", KD_USED, 2, 6, kd_probe_vdso, 0,
	     "move vDSO/vvar to their saved addresses (restore)"),
	FEAT(KD_FREEZER_V1, "freezer-v1", KD_USED, 2, 6, kd_probe_freezer, 0,
	     "freeze a cgroup v1 while seizing (--freeze-cgroup)"),
	FEAT(KD_FREEZER_V2, "freezer-v2", KD_USED, 5, 2, kd_probe_freezer, 0,
	     "freeze a cgroup2 while seizing (--freeze-cgroup)"),
};

const struct kd_feature_desc *kd_feature(enum kd_feature id)
{
	if ((unsigned int)id >= KD__MAX)
		return NULL;
	return &features[id];
}

const struct kd_feature_desc *kd_feature_by_name(const char *name)
{
	int i;

	for (i = 0; i < KD__MAX; i++)
		if (!strcmp(features[i].name, name))
			return &features[i];
	return NULL;
}

static int kd_init_release(struct kerndat *kd)
{
	struct utsname u;

	if (uname(&u))
		return neg_errno();
	snprintf(kd->release, sizeof(kd->release), "%s", u.release);
	if (kd_parse_release(kd->release, &kd->kernel))
		pr_warn("cannot parse kernel release '%s'\n", kd->release);
	return 0;
}

int kerndat_probe_one(struct kerndat *kd, enum kd_feature id)
{
	const struct kd_feature_desc *f = kd_feature(id);
	int err;

	if (!f)
		return -EINVAL;
	if (kd->res[id].probed)
		return 0;
	if (!kd->release[0]) {
		err = kd_init_release(kd);
		if (err)
			return err;
	}
	err = f->probe(kd, f);
	if (err) {
		errno = -err;
		kd_set(kd, id, false, "probe failed: %m");
	} else if (!kd->res[id].probed) {
		kd_set(kd, id, false, "probe gave no answer");
	}
	return 0;
}

int kerndat_probe(struct kerndat *kd)
{
	int i, err;

	memset(kd, 0, sizeof(*kd));
	err = kd_init_release(kd);
	if (err) {
		pr_errno(err, "uname");
		return err;
	}
	for (i = 0; i < KD__MAX; i++) {
		err = kerndat_probe_one(kd, i);
		if (err)
			return err;
	}
	return 0;
}
