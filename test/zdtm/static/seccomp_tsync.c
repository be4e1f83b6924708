// SPDX-License-Identifier: GPL-2.0
/*
 * A seccomp filter installed with SECCOMP_FILTER_FLAG_TSYNC while three
 * other threads run: every thread gets it (uname() fails with EPERM). After
 * SIGTERM each thread must still be in filter mode with one filter and have
 * uname() refused, and a thread made after the restore inherits it.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR 3

static pthread_barrier_t go, done;
static int bad[NR + 1];

static int refused(void)
{
	struct utsname u;
	char path[64], buf[4096];
	const char *m, *n;
	int mode = 0, filters = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", syscall(SYS_gettid));
	if (test_read_file(path, buf, sizeof(buf)) <= 0 || !(m = strstr(buf, "\nSeccomp:")) ||
	    !(n = strstr(buf, "\nSeccomp_filters:")) || sscanf(m, "\nSeccomp: %d", &mode) != 1 ||
	    sscanf(n, "\nSeccomp_filters: %d", &filters) != 1)
		return 0;
	return mode == 2 && filters == 1 && uname(&u) == -1 && errno == EPERM;
}

static void *thread(void *arg)
{
	int i = (int)(long)arg;

	pthread_barrier_wait(&go); /* the filter is in */
	pthread_barrier_wait(&go); /* after the restore */
	bad[i] = !refused();
	pthread_barrier_wait(&done);
	return NULL;
}

static void *late_thread(void *arg)
{
	(void)arg;
	bad[NR] = !refused();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_uname, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	pthread_t t[NR + 1];

	test_init(argc, argv);
	pthread_barrier_init(&go, NULL, NR + 1);
	pthread_barrier_init(&done, NULL, NR + 1);
	for (long i = 0; i < NR; i++)
		pthread_create(&t[i], NULL, thread, (void *)i);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)) {
		fail("seccomp TSYNC: %m");
		return 1;
	}
	pthread_barrier_wait(&go);
	test_daemon();
	test_waitsig();

	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	pthread_create(&t[NR], NULL, late_thread, NULL);
	pthread_join(t[NR], NULL);
	for (int i = 0; i <= NR; i++)
		if (bad[i]) {
			fail("thread %d: not in filter mode with the filter, or uname() allowed",
			     i);
			return 1;
		}
	if (!refused()) {
		fail("the main thread lost the filter");
		return 1;
	}
	pass();
	return 0;
}
