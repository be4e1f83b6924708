// SPDX-License-Identifier: GPL-2.0
/*
 * dump_task_core() on a real child: seize, infect, dump, cure, release, then
 * read core-PID.img and creds-PID.img back and compare them with what the
 * child set up and what /proc said while it was frozen. Run as root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dump.h"
#include "image.h"
#include "infect.h"
#include "proc-parse.h"
#include "seize.h"
#include "util.h"

#include "lib/victim.h"

#include "core.pb-c.h"
#include "creds.pb-c.h"

#define NR_THREADS 3
#define VICTIM_NOFILE 512
#define VICTIM_NICE 5
#define SHARED_VALUE 42
#define THREAD_VALUE 43
#define TIMER_VALUE 7

static pid_t victim;
static bool with_seccomp; /* the victim installs an allow-all seccomp filter */
static char dir[] = "/tmp/test-dump-core.XXXXXX";
static char altstack[16384];

static void on_usr1(int sig)
{
	(void)sig;
}

/* Threads have set their robust list (glibc does it before their function) once here. */
static pthread_barrier_t started;

static void *idle_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&started);
	for (;;)
		pause();
	return NULL;
}

static int victim_setup(timer_t *tid)
{
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN + 3 };
	struct itimerspec its = { .it_value = { .tv_sec = 200 } };
	struct itimerval itv = { .it_interval = { .tv_sec = 50 }, .it_value = { .tv_sec = 100 } };
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog allow_all = { .len = 1, .filter = &allow };
	struct rlimit rl;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGRTMIN + 1);
	sigaddset(&set, SIGRTMIN + 2);
	sigaddset(&set, SIGRTMIN + 3);
	sev.sigev_value.sival_int = TIMER_VALUE;
	if (sigprocmask(SIG_BLOCK, &set, NULL) || sigaction(SIGUSR1, &sa, NULL) ||
	    sigaltstack(&ss, NULL) || setitimer(ITIMER_REAL, &itv, NULL) ||
	    timer_create(CLOCK_MONOTONIC, &sev, tid) || timer_settime(*tid, 0, &its, NULL) ||
	    getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	rl.rlim_cur = VICTIM_NOFILE;
	if (setrlimit(RLIMIT_NOFILE, &rl) || setpriority(PRIO_PROCESS, 0, VICTIM_NICE) ||
	    prctl(PR_SET_NAME, "core-victim") || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    personality(PER_LINUX | ADDR_NO_RANDOMIZE) < 0)
		return -errno;
	if (with_seccomp && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &allow_all))
		return -errno;
	if (sigqueue(getpid(), SIGRTMIN + 1, (union sigval){ .sival_int = SHARED_VALUE }) ||
	    pthread_sigqueue(pthread_self(), SIGRTMIN + 2,
			     (union sigval){ .sival_int = THREAD_VALUE }))
		return -errno;
	return 0;
}

/* The child: state set up, NR_THREADS threads, then the timer id in the int @report. */
static int victim_threads(void *arg, void *report)
{
	pthread_t th;
	timer_t tid;
	int i, err;

	(void)arg;
	err = victim_setup(&tid);
	if (err)
		return err;
	err = pthread_barrier_init(&started, NULL, NR_THREADS);
	for (i = 1; !err && i < NR_THREADS; i++)
		err = pthread_create(&th, NULL, idle_thread, NULL);
	if (err)
		return -err; /* pthread_*() return the error number */
	pthread_barrier_wait(&started);
	*(int *)report = (int)(intptr_t)tid;
	return 0;
}

/* A failed test leaves its images: remove them and the directory (ENOENT after a pass). */
static void remove_images(void)
{
	enum cr_img_kind kinds[] = { CR_IMG_CORE, CR_IMG_CREDS };
	char path[128], name[64];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		if (img_file_name(kinds[i], (uint32_t)victim, name, sizeof(name)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		unlink(path);
	}
	rmdir(dir);
}

static int teardown(void **state)
{
	(void)state;
	remove_images();
	victim_kill(&victim);
	return 0;
}

static int start_victim(int *timer_id)
{
	/* no check: the child sleeps until killed, SIGUSR1 is its own */
	static const struct victim_ops ops = { .setup = victim_threads,
					       .report_fd = VICTIM_REPORT_FD };

	victim = victim_start(&ops, NULL, -1, timer_id, sizeof(*timer_id));
	return victim < 0 ? victim : 0;
}

/* Seize, infect, dump, cure, release: the images land in @dirfd. */
static void dump_victim(int dirfd, struct proc_status *st, int expect)
{
	struct dump_ctx ctx = { .dirfd = dirfd, .nr_tasks = 1 };
	struct dump_task dt = { 0 };
	struct parasite_ctl *ctl = NULL;
	struct pstree *t = NULL;
	int err;

	assert_int_equal(seize_tree(victim, NULL, &t), 0);
	dt.t = t->root;
	assert_int_equal(dt.t->nr_threads, NR_THREADS);
	err = dump_task_prepare(NULL, &dt);
	ctl = dt.ctl;
	ctx.tree = t;
	ctx.tasks = &dt;
	if (!err)
		err = dump_task_core(&ctx, &dt);
	if (ctl && parasite_cure(ctl) && !err)
		err = -EIO;
	unseize_tree(t, UNSEIZE_RESUME);
	*st = dt.status;
	vma_list_fini(&dt.vmas);
	free(dt.limits);
	dump_leader_reads_free(dt.leader_pre);
	assert_int_equal(err, expect);
}

static bool has_signal(SiginfoEntry **q, size_t n, int signo, int value)
{
	siginfo_t si;
	size_t i;

	for (i = 0; i < n; i++) {
		assert_int_equal(q[i]->siginfo.len, sizeof(si));
		memcpy(&si, q[i]->siginfo.data, sizeof(si));
		if (si.si_signo == signo && si.si_value.sival_int == value)
			return true;
	}
	return false;
}

static void check_threads(const CoreEntry *ce, const struct proc_status *st)
{
	const ThreadCoreEntry *t0 = ce->threads[0];
	size_t i;

	assert_int_equal(ce->n_threads, NR_THREADS);
	assert_int_equal(t0->tid, victim);
	assert_int_equal(t0->blocked, st->sigblk);
	assert_true(t0->sigaltstack && t0->sigaltstack->sp == (uintptr_t)altstack);
	assert_int_equal(t0->sigaltstack->size, sizeof(altstack));
	assert_true(has_signal(t0->pending, t0->n_pending, SIGRTMIN + 2, THREAD_VALUE));
	assert_int_equal(t0->comm.len, strlen("core-victim"));
	assert_memory_equal(t0->comm.data, "core-victim", t0->comm.len);
	for (i = 0; i < ce->n_threads; i++) {
		const ThreadCoreEntry *t = ce->threads[i];

		assert_int_equal(t->gpregs->fs_base, t->fs_base);
		assert_true(t->gpregs->ip != 0 && t->xsave.len >= 576);
		assert_true(t->has_robust_list_head && t->robust_list_head != 0);
		assert_int_equal(t->sched_nice, VICTIM_NICE);
		assert_int_equal(t->sched_policy, SCHED_OTHER);
		assert_false(t->stopped);
		assert_true(t->has_clear_child_tid);
		/* The threads but the leader inherited the mask; none of them got a signal. */
		if (i)
			assert_int_equal(t->blocked, st->sigblk);
		if (i)
			assert_int_equal(t->n_pending, 0);
	}
}

static void check_task(const TaskCoreEntry *tc, const struct proc_status *st, int timer_id)
{
	struct rlimit rl;
	int i;

	assert_int_equal(tc->n_sigactions, 64);
	for (i = 0; i < 64; i++) {
		bool caught = tc->sigactions[i]->handler > (uint64_t)(uintptr_t)SIG_IGN;

		assert_int_equal(caught, !!(st->sigcgt & (1ULL << i)));
	}
	assert_int_equal(tc->sigactions[SIGUSR1 - 1]->handler, (uintptr_t)on_usr1);
	assert_true(tc->sigactions[SIGUSR1 - 1]->flags & SA_RESTART);
	assert_int_equal(tc->itimer_real->interval_sec, 50);
	assert_true(tc->itimer_real->value_sec <= 100 && tc->itimer_real->value_sec >= 90);
	assert_int_equal(tc->itimer_virt->value_sec + tc->itimer_virt->value_usec, 0);
	assert_int_equal(tc->n_posix_timers, 1);
	assert_int_equal(tc->posix_timers[0]->id, timer_id);
	assert_int_equal(tc->posix_timers[0]->clock_id, CLOCK_MONOTONIC);
	assert_int_equal(tc->posix_timers[0]->sigev_notify, SIGEV_SIGNAL);
	assert_int_equal(tc->posix_timers[0]->sigev_signo, SIGRTMIN + 3);
	assert_int_equal((uint32_t)tc->posix_timers[0]->sigev_value, TIMER_VALUE);
	assert_true(tc->posix_timers[0]->value_sec <= 200 && tc->posix_timers[0]->value_sec >= 190);
	assert_int_equal(tc->n_rlimits, 16);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(tc->rlimits[RLIMIT_NOFILE]->resource, RLIMIT_NOFILE);
	assert_int_equal(tc->rlimits[RLIMIT_NOFILE]->cur, VICTIM_NOFILE);
	assert_int_equal(tc->rlimits[RLIMIT_NOFILE]->max, rl.rlim_max);
	assert_int_equal(getrlimit(RLIMIT_STACK, &rl), 0);
	assert_int_equal(tc->rlimits[RLIMIT_STACK]->cur, rl.rlim_cur);
	assert_int_equal(tc->personality, PER_LINUX | ADDR_NO_RANDOMIZE);
	assert_int_equal(tc->seccomp_mode, SECCOMP_MODE__SECCOMP_DISABLED);
	assert_true(
		has_signal(tc->shared_pending, tc->n_shared_pending, SIGRTMIN + 1, SHARED_VALUE));
}

static void check_creds(const CredsEntry *c, const struct proc_status *st)
{
	unsigned int i;

	assert_int_equal(c->uid, st->uid[0]);
	assert_int_equal(c->euid, st->uid[1]);
	assert_int_equal(c->suid, st->uid[2]);
	assert_int_equal(c->fsuid, st->uid[3]);
	assert_int_equal(c->gid, st->gid[0]);
	assert_int_equal(c->fsgid, st->gid[3]);
	assert_int_equal(c->uid, getuid());
	assert_int_equal(c->n_groups, st->ngroups);
	for (i = 0; i < st->ngroups; i++)
		assert_int_equal(c->groups[i], st->groups[i]);
	assert_int_equal(c->cap_eff, st->cap_eff);
	assert_int_equal(c->cap_prm, st->cap_prm);
	assert_int_equal(c->cap_bnd, st->cap_bnd);
	assert_true(c->no_new_privs);
	assert_int_equal(c->dumpable, 1);
	assert_int_equal(c->securebits, (uint32_t)prctl(PR_GET_SECUREBITS));
}

static void test_dump_core(void **state)
{
	ProtobufCMessage *core = NULL, *creds = NULL;
	struct proc_status st;
	char name[64];
	int timer_id, dirfd;

	(void)state;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-dump-core.XXXXXX")));
	dirfd = img_dir_open(dir, false);
	assert_true(dirfd >= 0);
	assert_int_equal(start_victim(&timer_id), 0);
	dump_victim(dirfd, &st, 0);
	assert_int_equal(img_read_one(dirfd, CR_IMG_CORE, (uint32_t)victim, &core), 0);
	assert_int_equal(img_read_one(dirfd, CR_IMG_CREDS, (uint32_t)victim, &creds), 0);
	assert_int_equal(((CoreEntry *)core)->pid, victim);
	check_threads((CoreEntry *)core, &st);
	check_task(((CoreEntry *)core)->tc, &st, timer_id);
	check_creds((CredsEntry *)creds, &st);
	/* The child still runs, its signals still queued. */
	assert_int_equal(kill(victim, 0), 0);
	protobuf_c_message_free_unpacked(core, NULL);
	protobuf_c_message_free_unpacked(creds, NULL);
	proc_status_fini(&st);
	assert_int_equal(img_file_name(CR_IMG_CORE, (uint32_t)victim, name, sizeof(name)), 0);
	unlinkat(dirfd, name, 0);
	assert_int_equal(img_file_name(CR_IMG_CREDS, (uint32_t)victim, name, sizeof(name)), 0);
	unlinkat(dirfd, name, 0);
	close(dirfd);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * A seccomp filter (allow-all, installed by every thread of the victim) is
 * dumped: each thread in filter mode naming a filter, the program as
 * installed (one instruction), stored once; the child runs on.
 */
static void test_seccomp_filter_dumped(void **state)
{
	ProtobufCMessage *core = NULL;
	struct proc_status st;
	char name[64];
	int timer_id, dirfd;
	CoreEntry *ce;
	size_t i;

	(void)state;
	with_seccomp = true;
	assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-dump-core.XXXXXX")));
	dirfd = img_dir_open(dir, false);
	assert_true(dirfd >= 0);
	assert_int_equal(start_victim(&timer_id), 0);
	dump_victim(dirfd, &st, 0);
	assert_int_equal(st.seccomp, 2);
	proc_status_fini(&st);
	assert_int_equal(img_read_one(dirfd, CR_IMG_CORE, (uint32_t)victim, &core), 0);
	ce = (CoreEntry *)core;
	assert_int_equal(ce->tc->n_seccomp, 1);
	assert_int_equal(ce->tc->seccomp[0]->insns.len, sizeof(struct sock_filter));
	for (i = 0; i < ce->n_threads; i++) {
		assert_true(ce->threads[i]->has_seccomp_mode);
		assert_int_equal(ce->threads[i]->seccomp_mode, SECCOMP_MODE__SECCOMP_FILTER);
		assert_int_equal(ce->threads[i]->seccomp_filter, 1);
	}
	assert_int_equal(kill(victim, 0), 0);
	protobuf_c_message_free_unpacked(core, NULL);
	assert_int_equal(img_file_name(CR_IMG_CORE, (uint32_t)victim, name, sizeof(name)), 0);
	unlinkat(dirfd, name, 0);
	assert_int_equal(img_file_name(CR_IMG_CREDS, (uint32_t)victim, name, sizeof(name)), 0);
	unlinkat(dirfd, name, 0);
	close(dirfd);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_dump_core, teardown),
		cmocka_unit_test_teardown(test_seccomp_filter_dumped, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
