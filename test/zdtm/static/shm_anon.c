// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous shared memory between a parent and its child: one MAP_SHARED
 * area created before the fork with known contents, one created by the child
 * is not shared (MAP_PRIVATE after fork stays private). After SIGTERM the
 * contents must be intact and the area still shared both ways: the parent
 * writes a token the child must see, the child answers with another one.
 * A restore that gives each process a private copy fails the handshake.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define SIZE (4 << 20)
#define DATA (SIZE - 4096) /* datagen area; the last page carries the handshake */

struct talk {
	volatile uint64_t ping, pong;
};

static int wait_value(volatile uint64_t *p, uint64_t v)
{
	for (int i = 0; i < 5000 && *p != v; i++)
		test_sleep_ms(1);
	return *p == v ? 0 : -ETIMEDOUT;
}

static int child(unsigned char *shm, int ready)
{
	struct talk *t = (struct talk *)(shm + DATA);
	unsigned char *priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);

	if (priv == MAP_FAILED)
		return 2;
	datagen(priv, 4096, 77);
	t->pong = 1; /* seen by the parent before it is ready */
	if (write(ready, "c", 1) != 1)
		return 2;
	test_waitsig();
	if (datachk(shm, DATA, 55, NULL) || datachk(priv, 4096, 77, NULL)) {
		test_msg("child: memory contents changed\n");
		return 1;
	}
	if (wait_value(&t->ping, 0x1111)) {
		test_msg("child: the parent's write after restore never arrived\n");
		return 1;
	}
	t->pong = 0x2222;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char *shm;
	struct talk *t;
	int ready[2];
	pid_t pid;

	test_init(argc, argv);
	shm = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED || pipe(ready)) {
		fail("mmap/pipe: %m");
		return 1;
	}
	datagen(shm, DATA, 55);
	t = (struct talk *)(shm + DATA);
	pid = fork();
	if (pid < 0) {
		fail("fork: %m");
		return 1;
	}
	if (pid == 0)
		_exit(child(shm, ready[1]));
	if (test_wait_ready(ready[0], 1) || wait_value(&t->pong, 1)) {
		fail("the child did not start or its write was not seen");
		return 1;
	}
	test_daemon();
	test_waitsig();

	kill(pid, SIGTERM);
	if (datachk(shm, DATA, 55, NULL)) {
		fail("parent: shared memory contents changed");
		return 1;
	}
	t->ping = 0x1111;
	if (wait_value(&t->pong, 0x2222)) {
		fail("the child's answer never arrived: the area is no longer shared");
		return 1;
	}
	if (test_reap_children(&pid, 1)) {
		fail("the child failed (see its message)");
		return 1;
	}
	pass();
	return 0;
}
