// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes holding unread data: one filled and untouched, one partly drained
 * (its read end non-blocking). After SIGTERM the data, the amounts, the
 * flags and the pipe sizes must be the same, and the pipes must still work.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "zdtmtst.h"

#define FULL_LEN 3000
#define PART_LEN 8192
#define PART_READ 1000

struct pipe_state {
	int fd[2];
	int flags[2];
	int size;
};

static int record(struct pipe_state *p)
{
	p->flags[0] = fcntl(p->fd[0], F_GETFL);
	p->flags[1] = fcntl(p->fd[1], F_GETFL);
	p->size = fcntl(p->fd[0], F_GETPIPE_SZ);
	return p->flags[0] < 0 || p->flags[1] < 0 || p->size < 0 ? neg_errno() : 0;
}

/* Flags, size, unread amount and bytes of one pipe; 0 or fail(). */
static int check_pipe(const struct pipe_state *p, const char *name, const unsigned char *expect,
		      int len)
{
	unsigned char got[PART_LEN];
	int avail = -1;

	if (fcntl(p->fd[0], F_GETFL) != p->flags[0] || fcntl(p->fd[1], F_GETFL) != p->flags[1] ||
	    fcntl(p->fd[0], F_GETPIPE_SZ) != p->size) {
		fail("%s: flags or size changed", name);
		return 1;
	}
	if (ioctl(p->fd[0], FIONREAD, &avail) || avail != len) {
		fail("%s: %d bytes unread, expected %d", name, avail, len);
		return 1;
	}
	if (read(p->fd[0], got, len) != len || memcmp(got, expect, len)) {
		fail("%s: the unread data differs", name);
		return 1;
	}
	/* Still a working pipe: a round trip through it. */
	if (write(p->fd[1], "ping", 4) != 4 || read(p->fd[0], got, 4) != 4 ||
	    memcmp(got, "ping", 4)) {
		fail("%s: the pipe no longer carries data: %m", name);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static unsigned char full[FULL_LEN], part[PART_LEN], sink[PART_READ];
	struct pipe_state a, b;

	test_init(argc, argv);
	datagen(full, sizeof(full), 1);
	datagen(part, sizeof(part), 2);
	if (pipe(a.fd) || pipe2(b.fd, O_NONBLOCK) || write(a.fd[1], full, FULL_LEN) != FULL_LEN ||
	    write(b.fd[1], part, PART_LEN) != PART_LEN ||
	    read(b.fd[0], sink, PART_READ) != PART_READ || record(&a) || record(&b)) {
		fail("cannot set up the pipes: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check_pipe(&a, "full pipe", full, FULL_LEN) ||
	    check_pipe(&b, "drained pipe", part + PART_READ, PART_LEN - PART_READ))
		return 1;
	pass();
	return 0;
}
