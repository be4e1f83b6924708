// SPDX-License-Identifier: GPL-2.0
/*
 * Seccomp filters shared and stacked across a tree. The parent installs a
 * filter refusing uname() with EPERM, then:
 * - a thread stacks its own filter refusing times() with ENOLINK (its
 *   siblings keep one filter);
 * - a forked child (sharing the parent's filter) stacks one refusing
 *   sysinfo() with EXDEV, then drops CAP_SYS_ADMIN from its effective set
 *   without no_new_privs, so a restore must install its filters while it
 *   still may (restore.md).
 * After SIGTERM every thread must show the same filter count and refusals.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "zdtmtst.h"

static int install(int nr, unsigned int ret)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ret),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ? -errno : 0;
}

/* Seccomp_filters: of the calling thread. */
static int nr_filters(void)
{
	char path[64], buf[4096];
	const char *n;
	int v;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", (long)syscall(SYS_gettid));
	if (test_read_file(path, buf, sizeof(buf)) <= 0)
		return neg_errno();
	n = strstr(buf, "\nSeccomp_filters:");
	return n && sscanf(n, "\nSeccomp_filters: %d", &v) == 1 ? v : -EBADMSG;
}

/* The calling thread's state: @filters filters; uname() refused; times(), sysinfo() as told. */
static const char *check(int filters, int times_errno, int sysinfo_errno)
{
	struct utsname u;

	if (nr_filters() != filters)
		return "wrong Seccomp_filters: count";
	if (uname(&u) != -1 || errno != EPERM)
		return "uname() is not refused with EPERM";
	errno = 0;
	if (syscall(SYS_times, NULL) == -1 ? errno != times_errno : times_errno != 0)
		return "times() does not give what its filter says";
	errno = 0;
	/* Without a filter sysinfo(NULL) fails with EFAULT. */
	if (syscall(SYS_sysinfo, NULL) != -1 || errno != sysinfo_errno)
		return "sysinfo() does not give what its filter says";
	return NULL;
}

static volatile int thread_state; /* 1: ready, 2: check now, 3: passed, 4: failed */

static void *thread_fn(void *arg)
{
	const char *why;

	(void)arg;
	if (install(SYS_times, ENOLINK)) {
		thread_state = 4;
		return NULL;
	}
	why = check(2, ENOLINK, EFAULT);
	thread_state = why ? 4 : 1;
	while (thread_state == 1)
		test_sleep_ms(5);
	why = check(2, ENOLINK, EFAULT);
	if (why)
		test_msg("thread: %s\n", why);
	thread_state = why ? 4 : 3;
	return NULL;
}

static int drop_sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_SYS_ADMIN / 32].effective &= ~(1U << (CAP_SYS_ADMIN % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static int child(int ready)
{
	const char *why;

	if (install(SYS_sysinfo, EXDEV) || drop_sys_admin()) {
		test_msg("child: cannot set up: %m\n");
		return 2;
	}
	why = check(2, 0, EXDEV);
	if (why) {
		test_msg("child: before the dump, %s\n", why);
		return 2;
	}
	if (write(ready, "c", 1) != 1)
		return 2;
	test_waitsig();
	why = check(2, 0, EXDEV);
	if (why)
		test_msg("child: %s\n", why);
	return why ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *why;
	pthread_t th;
	int ready[2];
	pid_t pid;

	test_init(argc, argv);
	if (install(SYS_uname, EPERM) || pipe(ready)) {
		fail("seccomp or pipe: %m");
		return 1;
	}
	pid = fork();
	if (pid == 0)
		_exit(child(ready[1]));
	close(ready[1]);
	if (pid < 0 || test_wait_ready(ready[0], 1)) {
		fail("the child could not set up its filters (see its message)");
		return 1;
	}
	if (pthread_create(&th, NULL, thread_fn, NULL)) {
		fail("pthread_create failed");
		return 1;
	}
	while (!thread_state)
		test_sleep_ms(5);
	why = thread_state == 1 ? check(1, 0, EFAULT) : "the thread's filter failed";
	if (why) {
		fail("before the dump: %s", why);
		return 1;
	}
	test_daemon();
	test_waitsig();
	why = check(1, 0, EFAULT);
	thread_state = 2;
	pthread_join(th, NULL);
	if (!why && thread_state != 3)
		why = "the thread's filters changed (see its message)";
	if (!why && test_reap_children(&pid, 1))
		why = "the child's filters changed (see its message)";
	if (why) {
		fail("%s", why);
		return 1;
	}
	pass();
	return 0;
}
