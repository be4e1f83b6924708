// SPDX-License-Identifier: GPL-2.0
/*
 * Thread pointers: four threads, each with __thread data of known values
 * (reached through fs_base) and its own gs_base set with ARCH_SET_GS to a
 * private block, read back through %gs. After SIGTERM each thread's fs_base
 * and gs_base must be the same (ARCH_GET_FS/ARCH_GET_GS), its TLS data
 * intact, and a load through %gs must give its block's value: a restore that
 * drops gs_base or gives a thread another's fs_base fails.
 */
#include <asm/prctl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NTHREADS 4

static __thread uint64_t tls_data[32];

struct worker {
	pthread_t th;
	int idx;
	uint64_t gs_block[4];
	unsigned long fs0, gs0;
	volatile int phase;
	const char *why;
};

static struct worker w[NTHREADS];

static unsigned long arch_get(int code)
{
	unsigned long v = 0;

	syscall(SYS_arch_prctl, code, &v);
	return v;
}

static uint64_t load_gs8(void)
{
	uint64_t v;

	__asm__ volatile("movq %%gs:8, %0" : "=r"(v));
	return v;
}

static void *worker_fn(void *arg)
{
	struct worker *me = arg;

	datagen(tls_data, sizeof(tls_data), 4000 + me->idx);
	me->gs_block[1] = 0x6500000000ULL + me->idx;
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)me->gs_block)) {
		me->why = "ARCH_SET_GS failed";
		me->phase = 3;
		return NULL;
	}
	me->fs0 = arch_get(ARCH_GET_FS);
	me->gs0 = arch_get(ARCH_GET_GS);
	me->phase = 1;
	while (me->phase != 2)
		test_sleep_ms(2);
	if (arch_get(ARCH_GET_FS) != me->fs0 || arch_get(ARCH_GET_GS) != me->gs0)
		me->why = "fs_base or gs_base changed";
	else if (datachk(tls_data, sizeof(tls_data), 4000 + me->idx, NULL))
		me->why = "the __thread data changed";
	else if (load_gs8() != me->gs_block[1])
		me->why = "a load through %gs gives another value";
	me->phase = 3;
	return NULL;
}

int main(int argc, char **argv)
{
	sigset_t term;

	test_init(argc, argv);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (int i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, worker_fn, &w[i])) {
			fail("pthread_create failed");
			return 1;
		}
	}
	pthread_sigmask(SIG_UNBLOCK, &term, NULL);
	for (int i = 0; i < NTHREADS; i++) {
		while (!w[i].phase)
			test_sleep_ms(1);
		if (w[i].why) {
			fail("thread %d: %s", i, w[i].why);
			return 1;
		}
	}
	test_daemon();
	test_waitsig();

	for (int i = 0; i < NTHREADS; i++)
		w[i].phase = 2;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].why) {
			fail("thread %d: %s", i, w[i].why);
			return 1;
		}
	}
	pass();
	return 0;
}
