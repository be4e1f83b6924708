// SPDX-License-Identifier: GPL-2.0
/*
 * A thread in strict seccomp mode (read, write, exit and rt_sigreturn only:
 * anything else kills the process): it reads a byte from one pipe and
 * writes it back plus one into another, until it reads 0 and calls exit().
 * The main thread stays in mode 0. After SIGTERM the thread must still
 * show mode 1 and answer, the main thread mode 0.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

static int to_thread[2], from_thread[2];
static volatile pid_t thread_tid;

static void *thread_fn(void *arg)
{
	unsigned char c;

	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)) {
		thread_tid = -1;
		return NULL;
	}
	/* From here on: raw read/write/exit only (no libc call that might do more). */
	while (syscall(SYS_read, to_thread[0], &c, 1) == 1 && c) {
		c++;
		if (syscall(SYS_write, from_thread[1], &c, 1) != 1)
			break;
	}
	syscall(SYS_exit, 0);
	return NULL;
}

static int seccomp_mode(pid_t tid)
{
	char path[64], buf[4096];
	const char *m;
	int v;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	if (test_read_file(path, buf, sizeof(buf)) <= 0)
		return neg_errno();
	m = strstr(buf, "\nSeccomp:");
	return m && sscanf(m, "\nSeccomp: %d", &v) == 1 ? v : -EBADMSG;
}

/* Send @c, expect @c + 1 back. */
static const char *ping(unsigned char c)
{
	unsigned char r;

	if (write(to_thread[1], &c, 1) != 1 || read(from_thread[0], &r, 1) != 1)
		return "the strict thread does not answer";
	return r == (unsigned char)(c + 1) ? NULL : "the strict thread answers wrong";
}

static const char *check(unsigned char c)
{
	if (seccomp_mode(thread_tid) != 1)
		return "the thread is not in strict mode";
	if (seccomp_mode(getpid()) != 0)
		return "the main thread is in a seccomp mode";
	return ping(c);
}

int main(int argc, char **argv)
{
	unsigned char zero = 0;
	const char *why;
	pthread_t th;

	test_init(argc, argv);
	if (pipe(to_thread) || pipe(from_thread) || pthread_create(&th, NULL, thread_fn, NULL)) {
		fail("pipe or pthread_create: %m");
		return 1;
	}
	while (!thread_tid)
		test_sleep_ms(5);
	why = thread_tid < 0 ? "prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) failed" : check(1);
	if (why) {
		fail("before the dump: %s", why);
		return 1;
	}
	test_daemon();
	test_waitsig();
	why = check(41);
	if (!why)
		why = ping(200);
	if (why) {
		fail("%s", why);
		return 1;
	}
	if (write(to_thread[1], &zero, 1) != 1 || pthread_join(th, NULL)) {
		fail("the strict thread does not exit");
		return 1;
	}
	pass();
	return 0;
}
