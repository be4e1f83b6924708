// SPDX-License-Identifier: GPL-2.0
/*
 * proc/task-bpf.c: the BTF walk that finds task_struct's members and the
 * task iterator's FUNC, on BTF built here; the pure lookups of a process's
 * threads; then, as root on a kernel with BTF, the iterator on ourselves: a
 * record per thread of /proc/self/task, the same fd table, fs context,
 * cgroups and namespaces for all, then a thread with a UTS namespace and an
 * fd table of its own told apart.
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/btf.h>

#include "lib/btf-blob.h"
#include "task-bpf.h"
#include "util.h"

/*
 * 1 int; 2 long; 3 struct list_head {next @0}; 4 ptr to 3 (a pointer for the
 * others); 5 struct {pid, tgid}; 6 struct sigpending {list @0, signal @16};
 * 7 struct task_struct {flags @0, anon 5 @8, nsproxy @16, cgroups @24, fs @32,
 * files @40, rseq @48, rseq_len @56, rseq_sig @60, pending @64}; 8
 * func_proto; 9 FUNC.
 */
static uint8_t *sample(size_t *len, const char *func, const char *fs)
{
	struct blob b = { .slen = 1 };
	uint32_t i32 = 32, i64 = 64;

	blob_type(&b, blob_str(&b, "int"), BTF_KIND_INT, 0, 4);
	blob_put(&b, &i32, sizeof(i32));
	blob_type(&b, blob_str(&b, "long"), BTF_KIND_INT, 0, 8);
	blob_put(&b, &i64, sizeof(i64));
	blob_type(&b, blob_str(&b, "list_head"), BTF_KIND_STRUCT, 1, 8);
	blob_member(&b, blob_str(&b, "next"), 4, 0);
	blob_type(&b, 0, BTF_KIND_PTR, 0, 3);
	blob_type(&b, 0, BTF_KIND_STRUCT, 2, 8);
	blob_member(&b, blob_str(&b, "pid"), 1, 0);
	blob_member(&b, blob_str(&b, "tgid"), 1, 32);
	blob_type(&b, blob_str(&b, "sigpending"), BTF_KIND_STRUCT, 2, 24);
	blob_member(&b, blob_str(&b, "list"), 3, 0);
	blob_member(&b, blob_str(&b, "signal"), 2, 128);
	blob_type(&b, blob_str(&b, "task_struct"), BTF_KIND_STRUCT, 10, 88);
	blob_member(&b, blob_str(&b, "flags"), 1, 0);
	blob_member(&b, 0, 5, 64);
	blob_member(&b, blob_str(&b, "nsproxy"), 4, 128);
	blob_member(&b, blob_str(&b, "cgroups"), 4, 192);
	blob_member(&b, blob_str(&b, fs), 4, 256);
	blob_member(&b, blob_str(&b, "files"), 4, 320);
	blob_member(&b, blob_str(&b, "rseq"), 4, 384);
	blob_member(&b, blob_str(&b, "rseq_len"), 1, 448);
	blob_member(&b, blob_str(&b, "rseq_sig"), 1, 480);
	blob_member(&b, blob_str(&b, "pending"), 6, 512);
	blob_type(&b, 0, BTF_KIND_FUNC_PROTO, 0, 0);
	blob_type(&b, blob_str(&b, func), BTF_KIND_FUNC, 0, 8);
	return blob_finish(&b, len);
}

static void test_layout(void **state)
{
	struct btf_task_layout l;
	size_t len;
	uint8_t *d = sample(&len, "bpf_iter_task", "fs");

	(void)state;
	assert_int_equal(btf_task_layout(d, len, &l), 0);
	assert_int_equal(l.iter_func_id, 9);
	assert_int_equal(l.off[TM_FLAGS], 0);
	assert_int_equal(l.off[TM_PID], 8);
	assert_int_equal(l.off[TM_TGID], 12);
	assert_int_equal(l.off[TM_NSPROXY], 16);
	assert_int_equal(l.off[TM_CGROUPS], 24);
	assert_int_equal(l.off[TM_FS], 32);
	assert_int_equal(l.off[TM_FILES], 40);
	assert_int_equal(l.off[TM_RSEQ], 48);
	assert_int_equal(l.off[TM_RSEQ_LEN], 56);
	assert_int_equal(l.off[TM_RSEQ_SIG], 60);
	assert_int_equal(l.off[TM_SIGPENDING], 64 + 16);
	assert_int_equal(btf_task_layout(d, len - 3, &l), -EINVAL);
	free(d);
	/* no task iterator, or no fs member (a kernel that renamed it): nothing */
	d = sample(&len, "bpf_iter_task_vma", "fs");
	assert_int_equal(btf_task_layout(d, len, &l), -ENOENT);
	free(d);
	/* "fsx" holds "fs" as a suffix, not as a name of its own */
	d = sample(&len, "bpf_iter_task", "fsx");
	assert_int_equal(btf_task_layout(d, len, &l), -ENOENT);
	free(d);
}

static void test_same(void **state)
{
	struct thread_raw t[3] = {
		{ .tid = 10, .ptr = { 0xa0, 0xb0, 0xc0, 0xd0 } },
		{ .tid = 11, .ptr = { 0xa0, 0xb1, 0xc0, 0 } },
		{ .tid = 12, .ptr = { 0, 0xb0, 0xc0, 0 } },
	};
	struct proc_threads p = { t, 3 }, none = { NULL, 0 };

	(void)state;
	assert_ptr_equal(threads_find(&p, 11), &t[1]);
	assert_null(threads_find(&p, 13));
	assert_null(threads_find(&none, 10));
	assert_true(threads_same(&p, 10, 11, THR_NSPROXY));
	assert_false(threads_same(&p, 10, 11, THR_CGROUPS));
	assert_true(threads_same(&p, 10, 12, THR_CGROUPS));
	/* an exited leader's NULL never matches, not even another NULL */
	assert_false(threads_same(&p, 10, 12, THR_NSPROXY));
	assert_false(threads_same(&p, 11, 12, THR_FS));
	/* a thread not listed: the caller reads it */
	assert_false(threads_same(&p, 10, 13, THR_FILES));
	assert_false(threads_same(&none, 10, 10, THR_FILES));
}

static pthread_barrier_t bar;
static pid_t apart_tid;

static void *apart(void *arg)
{
	sigset_t usr1;

	(void)arg;
	apart_tid = gettid();
	/* a signal queued to this thread alone, blocked: pending.signal shows it */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (unshare(CLONE_NEWUTS | CLONE_FILES) || pthread_sigmask(SIG_BLOCK, &usr1, NULL) ||
	    syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1))
		apart_tid = -1;
	pthread_barrier_wait(&bar); /* the test reads */
	pthread_barrier_wait(&bar); /* and is done */
	return NULL;
}

static void *idle(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	return NULL;
}

static unsigned int count_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	unsigned int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_iter_self(void **state)
{
	int prog = -1;
	struct thread_raw *r;
	struct proc_threads p;
	pthread_t th[3];
	unsigned int n, i;
	pid_t me = getpid();

	(void)state;
	if (geteuid() || access("/sys/kernel/btf/vmlinux", R_OK) || (prog = task_bpf_open()) < 0) {
		printf("no BPF task iterator here (not root, no BTF, a pid namespace): skipped\n");
		skip();
	}
	assert_int_equal(pthread_barrier_init(&bar, NULL, 4), 0);
	assert_int_equal(pthread_create(&th[0], NULL, idle, NULL), 0);
	assert_int_equal(pthread_create(&th[1], NULL, idle, NULL), 0);
	assert_int_equal(pthread_create(&th[2], NULL, apart, NULL), 0);
	pthread_barrier_wait(&bar);
	assert_true(apart_tid > 0);
	assert_int_equal(task_bpf_read(prog, me, &r, &n), 0);
	assert_int_equal(n, count_tasks());
	p = (struct proc_threads){ r, n };
	for (i = 0; i < n; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/task/%u", r[i].tid);
		assert_int_equal(access(path, F_OK), 0);
		assert_int_equal(r[i].tgid, me);
		assert_true(i == 0 || r[i].tid > r[i - 1].tid);
		assert_true(threads_same(&p, me, (pid_t)r[i].tid, THR_CGROUPS));
		assert_true(threads_same(&p, me, (pid_t)r[i].tid, THR_FS));
		if ((pid_t)r[i].tid == apart_tid)
			continue;
		assert_true(threads_same(&p, me, (pid_t)r[i].tid, THR_NSPROXY));
		assert_true(threads_same(&p, me, (pid_t)r[i].tid, THR_FILES));
	}
	assert_non_null(threads_find(&p, apart_tid));
	/* SIGUSR1 queued to it only; glibc (2.35) registered the rseq area of each thread */
	assert_int_equal(threads_find(&p, apart_tid)->sigpending, 1UL << (SIGUSR1 - 1));
	assert_int_equal(threads_find(&p, me)->sigpending, 0);
	if (__rseq_size) {
		const struct thread_raw *self = threads_find(&p, me);

		assert_int_equal(self->rseq, (uintptr_t)__builtin_thread_pointer() + __rseq_offset);
		assert_int_equal(self->rseq_sig, RSEQ_SIG);
		assert_true(self->rseq_len >= 32);
	}
	assert_false(threads_same(&p, me, apart_tid, THR_NSPROXY));
	assert_false(threads_same(&p, me, apart_tid, THR_FILES));
	pthread_barrier_wait(&bar);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	free(r);
	close(prog);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_iter_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
