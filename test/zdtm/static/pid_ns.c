// SPDX-License-Identifier: GPL-2.0
/*
 * A container's pid namespace: the test is the init (pid 1) of a pid
 * namespace of its own (test_init_ns(CLONE_NEWPID)), with a subtree: a
 * child in a session of its own with a grandchild that runs a second
 * thread, a child leading its own process group, and two zombies (one of
 * the init, one of the session leader); and a pid namespace nested inside
 * it (CLONE_NEWPID: a child that is its init, pid 1 there) with a child in
 * a session of its own running a second thread, and a zombie of that init
 * (CRIU cannot restore nested pid namespaces, its issue #2086). After the
 * restore every task sees
 * the same pid, parent, session, group and thread ids from inside
 * (getpid, getppid, getsid, getpgid, gettid, the last NSpid field of
 * /proc/self/status), the init is still pid 1, the zombies are still
 * zombies with their exit codes.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

enum {
	T_INIT,
	T_SESS,
	T_GRAND,
	T_THREAD,
	T_GROUP,
	T_NINIT,
	T_NCHILD,
	T_NTHREAD,
	T_NR
};
static const char *const names[T_NR] = {
	"init",		"session leader", "grandchild",		 "grandchild's thread",
	"group leader", "nested init",	  "nested init's child", "nested child's thread"
};

struct ids {
	int pid, ppid, sid, pgid, tid, nspid;
};

struct shared {
	volatile int ready[T_NR], done[T_NR];
	volatile int go;
	struct ids before[T_NR], after[T_NR];
};

static struct shared *sh;

static int last_nspid(void)
{
	char buf[4096], *l, *end;
	int v = -1;
	FILE *f = fopen("/proc/thread-self/status", "r");
	size_t n;

	if (!f)
		return neg_errno();
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	l = strstr(buf, "\nNSpid:");
	if (!l)
		return -EBADMSG;
	for (l += 7; *l && *l != '\n'; l = end) {
		long x = strtol(l, &end, 10);

		if (end == l)
			break;
		v = (int)x;
	}
	return v;
}

static void record(struct ids *i)
{
	i->pid = getpid();
	i->ppid = getppid();
	i->sid = getsid(0);
	i->pgid = getpgid(0);
	i->tid = (int)syscall(SYS_gettid);
	/* through the host's /proc: the last field is the pid inside */
	i->nspid = last_nspid();
}

/* Record, wait for the check, record again. */
static void report(int who)
{
	record(&sh->before[who]);
	__atomic_store_n(&sh->ready[who], 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		usleep(10000);
	record(&sh->after[who]);
	__atomic_store_n(&sh->done[who], 1, __ATOMIC_RELEASE);
}

static void *thread_main(void *arg)
{
	report((int)(long)arg);
	return NULL;
}

/* pid 1 of a nested pid namespace: a child in its own session with a thread, a zombie */
static int nested_init(void)
{
	pthread_t th;
	pid_t child;

	if (getpid() != 1)
		return 2;
	child = fork();
	if (child == 0) {
		if (setsid() < 0 || pthread_create(&th, NULL, thread_main, (void *)T_NTHREAD))
			_exit(3);
		report(T_NCHILD);
		pthread_join(th, NULL);
		_exit(0);
	}
	if (fork() == 0)
		_exit(6); /* a zombie of the nested init */
	report(T_NINIT);
	waitpid(child, NULL, 0);
	return 0;
}

static void wait_flag(volatile int *flag)
{
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		usleep(10000);
}

int main(int argc, char **argv)
{
	pid_t sess, group, zombie, nested;
	siginfo_t si;
	int i, bad = 0;

	test_init_ns(argc, argv, CLONE_NEWPID);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	if (getpid() != 1) {
		fail("the test is pid %d in its pid namespace, not 1", getpid());
		return 1;
	}
	sess = fork();
	if (sess == 0) {
		pthread_t th;
		pid_t grand;

		if (setsid() < 0)
			_exit(2);
		grand = fork();
		if (grand == 0) {
			if (pthread_create(&th, NULL, thread_main, (void *)T_THREAD))
				_exit(3);
			report(T_GRAND);
			pthread_join(th, NULL);
			_exit(0);
		}
		if (fork() == 0)
			_exit(9); /* a zombie of the session leader */
		report(T_SESS);
		waitpid(grand, NULL, 0);
		_exit(0);
	}
	group = fork();
	if (group == 0) {
		if (setpgid(0, 0))
			_exit(2);
		report(T_GROUP);
		_exit(0);
	}
	nested = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
	if (nested == 0)
		_exit(nested_init());
	zombie = fork();
	if (zombie == 0)
		_exit(5); /* a zombie of the init */
	for (i = 0; i < T_NR; i++)
		if (i != T_INIT)
			wait_flag(&sh->ready[i]);
	if (waitid(P_PID, (id_t)zombie, &si, WEXITED | WNOWAIT)) {
		fail("zombie %d: %m", zombie);
		return 1;
	}
	record(&sh->before[T_INIT]);
	test_msg("init %d, session leader %d, group leader %d, zombie %d, grandchild %d/%d\n",
		 getpid(), sess, group, zombie, sh->before[T_GRAND].pid, sh->before[T_THREAD].tid);

	test_daemon();
	test_waitsig();

	record(&sh->after[T_INIT]);
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < T_NR; i++)
		if (i != T_INIT)
			wait_flag(&sh->done[i]);
	for (i = 0; i < T_NR; i++) {
		const struct ids *b = &sh->before[i], *a = &sh->after[i];

		if (memcmp(a, b, sizeof(*a))) {
			fail("%s: pid %d ppid %d sid %d pgid %d tid %d NSpid %d, was %d %d %d %d "
			     "%d %d",
			     names[i], a->pid, a->ppid, a->sid, a->pgid, a->tid, a->nspid, b->pid,
			     b->ppid, b->sid, b->pgid, b->tid, b->nspid);
			bad = 1;
		}
	}
	if (sh->after[T_INIT].pid != 1 || sh->after[T_SESS].sid != sh->after[T_SESS].pid ||
	    sh->after[T_GROUP].pgid != sh->after[T_GROUP].pid ||
	    sh->after[T_GRAND].sid != sh->after[T_SESS].pid ||
	    sh->after[T_THREAD].tid == sh->after[T_GRAND].pid || sh->after[T_NINIT].pid != 1 ||
	    sh->after[T_NINIT].ppid != 0 || sh->after[T_NCHILD].ppid != 1 ||
	    sh->after[T_NCHILD].sid != sh->after[T_NCHILD].pid ||
	    sh->after[T_NTHREAD].tid == sh->after[T_NCHILD].pid) {
		fail("the ids inside are not the tree's shape");
		bad = 1;
	}
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)zombie, &si, WEXITED | WNOHANG) || si.si_pid != zombie ||
	    si.si_code != CLD_EXITED || si.si_status != 5) {
		fail("zombie %d: not back as a zombie with code 5 (pid %d code %d status %d)",
		     zombie, si.si_pid, si.si_code, si.si_status);
		bad = 1;
	}
	if (bad)
		return 1;
	pass();
	return 0;
}
