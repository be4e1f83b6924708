// SPDX-License-Identifier: GPL-2.0
/*
 * A tree wide enough for a parallel dump (dump/dump-par.c) to have several
 * tasks in flight at once, each with what the workers share or hand to the
 * tracer thread: the root forks NKIDS children, each forks a grandchild.
 * - one pipe's read end, created by the root, is one description in every
 *   process (the file table's dedup across workers), with data in it;
 * - a socketpair per pair of siblings, each end with a queued message
 *   (descriptions that are not shared but have a peer in another task);
 * - a MAP_SHARED anonymous area of the root, a slot written by each process
 *   (the shared memory set), and private memory written after the fork;
 * - in every process a second thread with a signal queued to it alone
 *   (PTRACE_PEEKSIGINFO: only the tracer thread may read it).
 * After the restore each process checks its own: the shared pipe still
 * holds the data and is shared (one read drains it for all), the sibling's
 * message, its slot, its private memory and the pending signal of its
 * thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NKIDS 12
#define NPROCS (1 + 2 * NKIDS)
#define PRIV (64 * 1024)
#define THREAD_SIG SIGUSR2

static int shared_pipe[2], pairs[NKIDS / 2][2], ready[2];
static uint64_t *slots;

/* The second thread: waits with THREAD_SIG pending in its own queue. */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int check_req, check_res = -1;

static void *thread_main(void *arg)
{
	sigset_t pend;

	(void)arg;
	pthread_mutex_lock(&m);
	while (!check_req)
		pthread_cond_wait(&cv, &m);
	sigpending(&pend);
	check_res = sigismember(&pend, THREAD_SIG) ? 0 : 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&m);
	return NULL;
}

static int start_thread(pthread_t *th)
{
	sigset_t s;
	int err;

	/* SIGTERM is the main thread's (test_waitsig()): the thread is born with it blocked */
	sigemptyset(&s);
	sigaddset(&s, THREAD_SIG);
	sigaddset(&s, SIGTERM);
	err = pthread_sigmask(SIG_BLOCK, &s, NULL) ?: pthread_create(th, NULL, thread_main, NULL);
	if (err)
		return -err;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	err = pthread_sigmask(SIG_UNBLOCK, &s, NULL) ?: pthread_kill(*th, THREAD_SIG);
	return -err;
}

/* 0 when the thread still sees its signal pending after the restore. */
static int thread_check(pthread_t th)
{
	pthread_mutex_lock(&m);
	check_req = 1;
	pthread_cond_broadcast(&cv);
	while (check_res < 0)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
	return check_res;
}

/* Process @id (1..NPROCS-1) after its fork: its own state, then the checks once signalled. */
static int run(int id, pid_t kid)
{
	static unsigned char priv[PRIV];
	int kidx = (id - 1) % NKIDS, pair = kidx / 2, side = kidx % 2, bad = 0;
	char msg[32], got[32];
	pthread_t th;
	ssize_t n;

	for (int p = 0; p < NKIDS / 2; p++)
		if (p != pair) {
			close(pairs[p][0]);
			close(pairs[p][1]);
		}
	/* the grandchild keeps its parent's end too: the message is read by the child only */
	snprintf(msg, sizeof(msg), "from %d side %d", pair, side);
	if (id <= NKIDS && write(pairs[pair][side], msg, strlen(msg) + 1) < 0)
		return 2;
	datagen(priv, sizeof(priv), 100 + id);
	slots[id] = 1000 + id;
	if (start_thread(&th) || write(ready[1], "r", 1) != 1)
		return 2;
	test_waitsig();
	if (kid > 0 && test_reap_children(&kid, 1))
		bad |= 1;
	if (id <= NKIDS) {
		snprintf(msg, sizeof(msg), "from %d side %d", pair, !side);
		n = recv(pairs[pair][side], got, sizeof(got), MSG_DONTWAIT);
		if (n != (ssize_t)strlen(msg) + 1 || strcmp(got, msg)) {
			test_msg("process %d: the sibling's message is lost (%zd)\n", id, n);
			bad |= 1;
		}
	}
	if (datachk(priv, sizeof(priv), 100 + id, NULL) || slots[id] != 1000 + (uint64_t)id) {
		test_msg("process %d: its memory changed\n", id);
		bad |= 1;
	}
	if (thread_check(th)) {
		test_msg("process %d: its thread's pending signal is lost\n", id);
		bad |= 1;
	}
	return bad;
}

int main(int argc, char **argv)
{
	pid_t kids[NKIDS];
	char buf[64];
	pthread_t th;
	int bad = 0;

	test_init(argc, argv);
	slots = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED || pipe(shared_pipe) || pipe(ready)) {
		fail("setup: %m");
		return 1;
	}
	for (int p = 0; p < NKIDS / 2; p++)
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pairs[p])) {
			fail("socketpair: %m");
			return 1;
		}
	if (write(shared_pipe[1], "shared pipe data", 17) != 17) {
		fail("write: %m");
		return 1;
	}
	for (int k = 0; k < NKIDS; k++) {
		kids[k] = fork();
		if (kids[k] < 0) {
			fail("fork: %m");
			return 1;
		}
		if (kids[k] == 0) {
			pid_t g;

			close(shared_pipe[1]);
			g = fork();
			if (g < 0)
				_exit(2);
			_exit(run(g ? 1 + k : 1 + NKIDS + k, g));
		}
	}
	for (int p = 0; p < NKIDS / 2; p++) {
		close(pairs[p][0]);
		close(pairs[p][1]);
	}
	if (start_thread(&th) || test_wait_ready(ready[0], NPROCS - 1)) {
		fail("the tree did not start");
		return 1;
	}
	test_daemon();
	test_waitsig();

	/* the read end is one description in all: what the root reads is gone for all */
	close(shared_pipe[1]);
	if (read(shared_pipe[0], buf, sizeof(buf)) != 17 || strcmp(buf, "shared pipe data")) {
		test_msg("the shared pipe lost its data\n");
		bad = 1;
	}
	if (test_reap_children(kids, NKIDS))
		bad = 1;
	if (read(shared_pipe[0], buf, sizeof(buf)) != 0) {
		test_msg("the shared pipe is not at its end\n");
		bad = 1;
	}
	if (thread_check(th)) {
		test_msg("the root's thread lost its pending signal\n");
		bad = 1;
	}
	if (bad) {
		fail("the tree lost state (see the messages)");
		return 1;
	}
	pass();
	return 0;
}
