// SPDX-License-Identifier: GPL-2.0
/*
 * Two stacked seccomp filters: the older one, installed with
 * SECCOMP_FILTER_FLAG_LOG, kills the process on sysfs() and makes uname()
 * fail with EACCES; the newer one makes uname() fail with EPERM. Of equal
 * actions the newest filter's wins, so uname() gives EPERM only while the
 * filters keep their order. After SIGTERM /proc/self/status must still
 * show filter mode with 2 filters, uname() must still fail with EPERM, and
 * a forked child (it inherits the filters) calling sysfs() must die of
 * SIGSYS. Neither syscall is used by the dump's parasite or the restorer.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#ifndef SECCOMP_FILTER_FLAG_LOG
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1) /* 4.14 */
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U /* 4.14 */
#endif

/* @ret for syscall @nr, @ret2 for @nr2, on x86-64; allow the rest (another arch: kill). */
static int install(int nr, unsigned int ret, int nr2, unsigned int ret2, unsigned int flags)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ret),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr2, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, ret2),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog) ? -errno : 0;
}

/* The Seccomp: and Seccomp_filters: lines of /proc/self/status. */
static int status_mode(int *mode, int *filters)
{
	char buf[4096];
	const char *m, *n;

	if (test_read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -EIO;
	m = strstr(buf, "\nSeccomp:");
	n = strstr(buf, "\nSeccomp_filters:");
	if (!m || !n || sscanf(m, "\nSeccomp: %d", mode) != 1 ||
	    sscanf(n, "\nSeccomp_filters: %d", filters) != 1)
		return -EINVAL;
	return 0;
}

static const char *check(void)
{
	struct utsname u;
	int mode, filters, status;
	pid_t pid;

	if (status_mode(&mode, &filters) || mode != 2 || filters != 2)
		return "/proc/self/status: not seccomp mode 2 with 2 filters";
	if (uname(&u) != -1 || errno != EPERM)
		return "uname() is not refused with EPERM (the newest filter's errno)";
	pid = fork();
	if (pid < 0)
		return "fork failed";
	if (pid == 0) {
		syscall(SYS_sysfs, 3);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		return "a child calling sysfs() did not die of SIGSYS";
	return NULL;
}

int main(int argc, char **argv)
{
	const char *why;
	int err;

	test_init(argc, argv);
	err = install(SYS_sysfs, SECCOMP_RET_KILL_PROCESS, SYS_uname, SECCOMP_RET_ERRNO | EACCES,
		      SECCOMP_FILTER_FLAG_LOG);
	if (!err)
		err = install(SYS_uname, SECCOMP_RET_ERRNO | EPERM, SYS_uname,
			      SECCOMP_RET_ERRNO | EPERM, 0);
	if (err) {
		fail("seccomp(SECCOMP_SET_MODE_FILTER): %s", strerror(-err));
		return 1;
	}
	why = check();
	if (why) {
		fail("before the dump: %s", why);
		return 1;
	}
	test_daemon();
	test_waitsig();
	why = check();
	if (why) {
		fail("%s", why);
		return 1;
	}
	pass();
	return 0;
}
