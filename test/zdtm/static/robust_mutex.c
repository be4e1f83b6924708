// SPDX-License-Identifier: GPL-2.0
/*
 * A robust, process-shared mutex in shared memory, held by a child. After
 * SIGTERM the mutex word must still name the child's tid, and the child's
 * robust list must still be registered (get_robust_list gives the same head):
 * when the child is killed the kernel marks the mutex, and the root's lock
 * returns EOWNERDEAD within 5 s. A restore without set_robust_list leaves the
 * mutex locked by a dead owner and the root times out.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

struct shared {
	pthread_mutex_t m;
	volatile pid_t tid;
	volatile void *head;
	volatile size_t len;
	volatile int check; /* 1: the child compares its robust list head now */
	volatile int verdict; /* 1 good, 2 bad */
};

static int child(struct shared *sh, int ready)
{
	void *head;
	size_t len;

	if (pthread_mutex_lock(&sh->m) || syscall(SYS_get_robust_list, 0, &head, &len))
		return 2;
	sh->tid = syscall(SYS_gettid);
	sh->head = head;
	sh->len = len;
	if (write(ready, "c", 1) != 1)
		return 2;
	while (!sh->check)
		test_sleep_ms(2);
	sh->verdict = syscall(SYS_get_robust_list, 0, &head, &len) == 0 && head == sh->head &&
				      len == sh->len
			      ? 1
			      : 2;
	for (;;)
		pause(); /* killed by the root */
}

int main(int argc, char **argv)
{
	struct shared *sh;
	pthread_mutexattr_t a;
	struct timespec until;
	int ready[2], r, status;
	pid_t kid;

	test_init(argc, argv);
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || pipe(ready) || pthread_mutexattr_init(&a) ||
	    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) ||
	    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) ||
	    pthread_mutex_init(&sh->m, &a)) {
		fail("setup: %m");
		return 1;
	}
	kid = fork();
	if (kid == 0)
		_exit(child(sh, ready[1]));
	close(ready[1]);
	if (kid < 0 || test_wait_ready(ready[0], 1)) {
		fail("the child did not take the mutex");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (((unsigned int)sh->m.__data.__lock & 0x3fffffff) != (unsigned int)sh->tid) {
		fail("the mutex word %#x does not name the owner %d", sh->m.__data.__lock, sh->tid);
		return 1;
	}
	sh->check = 1;
	for (int i = 0; i < 5000 && !sh->verdict; i++)
		test_sleep_ms(1);
	if (sh->verdict != 1) {
		fail("the child's robust list head is gone or moved (verdict %d)", sh->verdict);
		return 1;
	}
	kill(kid, SIGKILL);
	waitpid(kid, &status, 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	r = pthread_mutex_timedlock(&sh->m, &until);
	if (r != EOWNERDEAD) {
		fail("locking after the owner died gave %d, expected EOWNERDEAD (%d)", r,
		     EOWNERDEAD);
		return 1;
	}
	pthread_mutex_consistent(&sh->m);
	pthread_mutex_unlock(&sh->m);
	pass();
	return 0;
}
