// SPDX-License-Identifier: GPL-2.0
/*
 * Four processes (the root and three forked children, no vfork) each counting
 * in a loop: a private counter, published into its slot of a shared page.
 * After SIGTERM the root checks that its own counter equals its slot and that
 * the three children's slots still advance, then stops the children, each of
 * which checks that its private counter equals its slot.
 */
#include <errno.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NPROC 4

struct slot {
	volatile uint64_t count;
	volatile int stop;
} __attribute__((aligned(64)));

static struct slot *slots;

static void count_until(int i, volatile int *stop, uint64_t *priv)
{
	struct timespec nap = { 0, 100 * 1000 };

	while (!*stop) {
		(*priv)++;
		slots[i].count = *priv;
		nanosleep(&nap, NULL);
	}
}

static int child(int i)
{
	uint64_t priv = 0;

	count_until(i, &slots[i].stop, &priv);
	if (priv != slots[i].count) {
		test_msg("process %d: private counter %lu, slot %lu\n", i, (unsigned long)priv,
			 (unsigned long)slots[i].count);
		return 1;
	}
	return 0;
}

/* The children's slots all move within 10 s. */
static int children_advance(void)
{
	uint64_t seen[NPROC];
	int i;

	for (i = 1; i < NPROC; i++)
		seen[i] = slots[i].count;
	for (int round = 0; round < 1000; round++) {
		for (i = 1; i < NPROC && slots[i].count > seen[i]; i++)
			;
		if (i == NPROC)
			return 0;
		test_sleep_ms(10);
	}
	test_msg("slot %d stays at %lu\n", i, (unsigned long)slots[i].count);
	return -ETIMEDOUT;
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 100 * 1000 };
	pid_t kids[NPROC - 1];
	uint64_t priv = 0;

	test_init(argc, argv);
	slots = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED) {
		fail("mmap: %m");
		return 1;
	}
	for (int i = 1; i < NPROC; i++) {
		kids[i - 1] = fork();
		if (kids[i - 1] < 0) {
			fail("fork: %m");
			return 1;
		}
		if (kids[i - 1] == 0)
			_exit(child(i));
	}
	if (children_advance()) {
		fail("the children did not start counting");
		return 1;
	}
	test_daemon();
	while (test_go()) {
		priv++;
		slots[0].count = priv;
		nanosleep(&nap, NULL);
	}
	if (priv != slots[0].count || children_advance()) {
		fail("root counter %lu slot %lu, or a child stopped counting", (unsigned long)priv,
		     (unsigned long)slots[0].count);
		return 1;
	}
	for (int i = 1; i < NPROC; i++)
		slots[i].stop = 1;
	if (test_reap_children(kids, NPROC - 1)) {
		fail("a child's counter and slot differ (see the messages)");
		return 1;
	}
	pass();
	return 0;
}
