// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous shared memory across three levels with different owners: area
 * R created by the root before any fork (shared by all), area C created by
 * the child after its fork (shared by the child and the grandchild only),
 * and in the grandchild a MAP_SHARED area it keeps alone. After SIGTERM a
 * token passes through R root -> grandchild, through C grandchild -> child,
 * and back through R child -> root; the private-to-one area keeps its data.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define SZ (64 * 1024)

struct box {
	volatile uint64_t v[4];
};

static void *shared_area(void)
{
	void *p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int wait_v(volatile uint64_t *p, uint64_t v)
{
	for (int i = 0; i < 5000 && *p != v; i++)
		test_sleep_ms(1);
	return *p == v ? 0 : -ETIMEDOUT;
}

static int grandchild(struct box *r, struct box *c, int ready)
{
	unsigned char *own = shared_area();

	if (!own)
		return 2;
	datagen(own, SZ, 33);
	if (write(ready, "g", 1) != 1)
		return 2;
	test_waitsig();
	if (datachk(own, SZ, 33, NULL) || datachk((unsigned char *)c + 64, SZ - 64, 22, NULL)) {
		test_msg("grandchild: area data changed\n");
		return 1;
	}
	if (wait_v(&r->v[0], 0x1001)) {
		test_msg("grandchild: the root's token never came through R\n");
		return 1;
	}
	c->v[0] = 0x2002;
	return 0;
}

static int child(struct box *r, int ready)
{
	struct box *c = shared_area();
	pid_t g;
	int bad = 0;

	if (!c)
		return 2;
	datagen((unsigned char *)c + 64, SZ - 64, 22);
	g = fork();
	if (g == 0)
		_exit(grandchild(r, c, ready));
	if (g < 0 || write(ready, "c", 1) != 1)
		return 2;
	test_waitsig();
	kill(g, SIGTERM);
	if (wait_v(&c->v[0], 0x2002)) {
		test_msg("child: the grandchild's token never came through C\n");
		bad = 1;
	}
	r->v[1] = 0x3003;
	return bad | (test_reap_children(&g, 1) ? 1 : 0);
}

int main(int argc, char **argv)
{
	struct box *r;
	int ready[2];
	pid_t kid;

	test_init(argc, argv);
	r = shared_area();
	if (!r || pipe(ready)) {
		fail("setup: %m");
		return 1;
	}
	datagen((unsigned char *)r + 64, SZ - 64, 11);
	kid = fork();
	if (kid == 0)
		_exit(child(r, ready[1]));
	close(ready[1]);
	if (kid < 0 || test_wait_ready(ready[0], 2)) {
		fail("the tree did not start");
		return 1;
	}
	test_daemon();
	test_waitsig();

	kill(kid, SIGTERM);
	if (datachk((unsigned char *)r + 64, SZ - 64, 11, NULL)) {
		fail("area R lost its data");
		return 1;
	}
	r->v[0] = 0x1001;
	if (wait_v(&r->v[1], 0x3003)) {
		fail("the token did not come back: R or C is no longer shared (see the messages)");
		return 1;
	}
	if (test_reap_children(&kid, 1)) {
		fail("a descendant failed (see the messages)");
		return 1;
	}
	pass();
	return 0;
}
