// SPDX-License-Identifier: GPL-2.0
/*
 * Alternate signal stacks: the main thread has one, a second thread has its
 * own with SS_AUTODISARM. Both have known contents below the part a handler
 * uses. After SIGTERM each thread's sigaltstack() must report the same stack,
 * size and flags, and an SA_ONSTACK handler must run on that thread's stack
 * (the address of its local variable lies inside it, SS_ONSTACK inside it).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

/* Linux 4.7, linux/signal.h: not in glibc's headers. */
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif

#define ALT_SIZE (64 * 1024)
#define KEEP 4096 /* the lowest bytes, kept as datagen wrote them */

struct alt {
	void *sp;
	int flags; /* SS_AUTODISARM or 0 */
	volatile unsigned long seen_addr; /* a local of the last handler run */
	volatile int seen_flags; /* sigaltstack() flags inside it */
	volatile int runs;
	const char *why; /* of the thread's verdict, NULL if fine */
};

static __thread struct alt *my_alt;
static struct alt alts[2];
static volatile int thread_go; /* 1: check now, 2: done */

static void on_usr1(int sig)
{
	volatile char here;
	stack_t cur;

	(void)sig;
	sigaltstack(NULL, &cur);
	my_alt->seen_addr = (unsigned long)&here;
	my_alt->seen_flags = cur.ss_flags;
	my_alt->runs++;
}

static int setup(struct alt *a, int flags)
{
	stack_t ss = { .ss_size = ALT_SIZE, .ss_flags = flags };

	a->sp = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->sp == MAP_FAILED)
		return -errno;
	a->flags = flags;
	datagen(a->sp, KEEP, 300 + flags);
	ss.ss_sp = a->sp;
	my_alt = a;
	return sigaltstack(&ss, NULL) ? -errno : 0;
}

/* The stack is as set up and a handler runs on it; NULL or why not. */
static const char *check(struct alt *a)
{
	unsigned long lo = (unsigned long)a->sp;
	int runs = a->runs;
	stack_t cur;

	if (sigaltstack(NULL, &cur))
		return "sigaltstack() failed";
	if (cur.ss_sp != a->sp || cur.ss_size != ALT_SIZE || cur.ss_flags != a->flags)
		return "sigaltstack() reports another stack, size or flags";
	if (datachk(a->sp, KEEP, 300 + a->flags, NULL))
		return "the contents of the alternate stack changed";
	raise(SIGUSR1);
	if (a->runs != runs + 1)
		return "the handler did not run";
	if (a->seen_addr < lo || a->seen_addr >= lo + ALT_SIZE)
		return "the handler did not run on the alternate stack";
	if (!(a->seen_flags & SS_ONSTACK) && !(a->flags & SS_AUTODISARM))
		return "SS_ONSTACK not reported inside the handler";
	return NULL;
}

static void *thread_fn(void *arg)
{
	struct alt *a = arg;

	if (setup(a, (int)SS_AUTODISARM) || check(a)) {
		a->why = "thread: setup failed";
		thread_go = 2;
		return NULL;
	}
	thread_go = 0;
	while (thread_go != 1)
		test_sleep_ms(1);
	a->why = check(a);
	thread_go = 2;
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK };
	const char *why;
	pthread_t th;
	sigset_t term;

	test_init(argc, argv);
	sigemptyset(&sa.sa_mask);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	thread_go = 3;
	if (sigaction(SIGUSR1, &sa, NULL) || setup(&alts[0], 0) || check(&alts[0])) {
		fail("cannot set up the alternate stack: %m");
		return 1;
	}
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	if (pthread_create(&th, NULL, thread_fn, &alts[1])) {
		fail("pthread_create failed");
		return 1;
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	while (thread_go == 3)
		test_sleep_ms(1);
	if (thread_go == 2) {
		fail("%s", alts[1].why);
		return 1;
	}
	test_daemon();
	test_waitsig();

	why = check(&alts[0]);
	thread_go = 1;
	pthread_join(th, NULL);
	if (why || alts[1].why) {
		fail("%s%s", why ? "main thread: " : "second thread: ", why ? why : alts[1].why);
		return 1;
	}
	pass();
	return 0;
}
