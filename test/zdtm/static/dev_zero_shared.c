// SPDX-License-Identifier: GPL-2.0
/*
 * MAP_SHARED mappings of /dev/zero (shared anonymous memory, "/dev/zero
 * (deleted)" in maps): one shared with a child, one of the root alone, both
 * with data. After the restore the data are intact and the first is still
 * one object: what the root writes the child reads, and back.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zdtmtst.h"

#define LEN (64UL << 10)

static volatile uint8_t *shared, *own;

static int child(int ready, int back)
{
	sigset_t set;
	int sig;
	char c;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (write(ready, "R", 1) != 1)
		return 1;
	/* the root's byte after the restore, then ours for it */
	if (read(back, &c, 1) != 1 || shared[LEN - 1] != 0xa5) {
		test_msg("child: the root's write is not seen\n");
		return 1;
	}
	shared[LEN - 2] = 0x5a;
	if (write(ready, "W", 1) != 1)
		return 1;
	sigwait(&set, &sig);
	return 0;
}

int main(int argc, char **argv)
{
	int fd, ready[2], back[2];
	size_t off;
	char c;
	pid_t kid;

	test_init(argc, argv);
	fd = open("/dev/zero", O_RDWR);
	if (fd < 0 || pipe(ready) || pipe(back)) {
		fail("setup: %m");
		return 1;
	}
	shared = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	own = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (shared == MAP_FAILED || own == MAP_FAILED) {
		fail("mmap /dev/zero: %m");
		return 1;
	}
	datagen((void *)shared, LEN - 2, 1);
	datagen((void *)own, LEN, 2);
	kid = fork();
	if (kid < 0) {
		fail("fork: %m");
		return 1;
	}
	if (kid == 0)
		_exit(child(ready[1], back[0]));
	if (test_wait_ready(ready[0], 1))
		return 1;
	test_daemon();
	test_waitsig();
	if (datachk((void *)shared, LEN - 2, 1, &off) || datachk((void *)own, LEN, 2, &off)) {
		fail("data differ at offset %zu", off);
		return 1;
	}
	shared[LEN - 1] = 0xa5;
	if (write(back[1], "G", 1) != 1 || read(ready[0], &c, 1) != 1 || shared[LEN - 2] != 0x5a) {
		fail("the mapping is not shared with the child any more");
		return 1;
	}
	if (test_reap_children(&kid, 1))
		return 1;
	pass();
	return 0;
}
