// SPDX-License-Identifier: GPL-2.0
/*
 * An epoll shared by a parent and its child (created and filled before the
 * fork: the child holds the same targets at the same numbers), to which the
 * child added a pipe only it holds, and an epoll of the child alone. After
 * SIGTERM the child sees the same readiness and data in both, changes a
 * registration of the shared one with EPOLL_CTL_MOD and removes its own
 * with EPOLL_CTL_DEL, by its fd numbers; the parent then sees the change:
 * each registration was restored once, by the process whose fd it is.
 */
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR 6
#define NEW_DATA 0xfeedull
#define CHILD_DATA 0xc1ull

/* Targets 0-2 pipe read ends (0 holds data), 3-5 eventfds (4 counts). */
static int fds[NR];

static uint64_t data_of(int i)
{
	return 0xe0000ull + (uint64_t)i;
}

static int add_targets(int ep)
{
	int i, p[2];

	for (i = 0; i < NR; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data_of(i) };

		if (i < 3) {
			if (pipe(p) || (i == 0 && write(p[1], "d", 1) != 1))
				return neg_errno();
			fds[i] = p[0];
		} else {
			fds[i] = eventfd(i == 4, EFD_NONBLOCK);
			if (fds[i] < 0)
				return neg_errno();
		}
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			return neg_errno();
	}
	return 0;
}

/* @ep reports exactly the @n events of data @d (any order), all EPOLLIN. */
static int expect(int ep, const char *who, int n, const uint64_t *d)
{
	struct epoll_event evs[NR + 2];
	int got = epoll_wait(ep, evs, NR + 2, 0), i, k, ok = got == n;

	for (i = 0; ok && i < got; i++) {
		for (k = 0, ok = 0; k < n && !ok; k++)
			ok = evs[i].events == EPOLLIN && evs[i].data.u64 == d[k];
	}
	if (!ok) {
		test_msg("%s: %d events (first data %llx), expected %d (first data %llx)\n", who,
			 got, got > 0 ? (unsigned long long)evs[0].data.u64 : 0ull, n,
			 (unsigned long long)d[0]);
		return 1;
	}
	return 0;
}

static int child(int ep, int ready)
{
	const uint64_t shared[] = { data_of(0), data_of(4), CHILD_DATA };
	const uint64_t own_data[] = { 0xc0 };
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0xc0 };
	int own = epoll_create1(0), p[2], q[2];

	if (own < 0 || pipe(p) || write(p[1], "c", 1) != 1 || pipe(q) || write(q[1], "q", 1) != 1)
		return 2;
	if (epoll_ctl(own, EPOLL_CTL_ADD, p[0], &ev) || epoll_ctl(own, EPOLL_CTL_ADD, p[1], &ev))
		return 2;
	/* a target of the shared epoll that only the child has, under its own number */
	ev.data.u64 = CHILD_DATA;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, q[0], &ev) || write(ready, "r", 1) != 1)
		return 2;
	test_waitsig();
	if (expect(ep, "child, shared epoll", 3, shared) ||
	    expect(own, "child, its own epoll", 1, own_data))
		return 1;
	ev.data.u64 = NEW_DATA;
	if (epoll_ctl(ep, EPOLL_CTL_MOD, fds[0], &ev) || epoll_ctl(ep, EPOLL_CTL_DEL, q[0], NULL)) {
		test_msg("child: EPOLL_CTL_MOD/DEL on the shared epoll: %m\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const uint64_t before[] = { data_of(0), data_of(4), CHILD_DATA };
	const uint64_t after[] = { NEW_DATA, data_of(4) };
	int ep, rp[2];
	pid_t pid;

	test_init(argc, argv);
	ep = epoll_create1(0);
	if (ep < 0 || add_targets(ep) || pipe(rp)) {
		fail("cannot set up: %m");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		close(rp[0]);
		_exit(child(ep, rp[1]));
	}
	close(rp[1]);
	if (pid < 0 || test_wait_ready(rp[0], 1)) {
		fail("the child did not start");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (expect(ep, "parent, after restore", 3, before)) {
		fail("the shared epoll's readiness changed");
		test_reap_children(&pid, 1);
		return 1;
	}
	if (test_reap_children(&pid, 1)) {
		fail("the child found its epolls changed");
		return 1;
	}
	if (expect(ep, "parent, after the child's EPOLL_CTL_MOD and DEL", 2, after)) {
		fail("the child's EPOLL_CTL_MOD/DEL did not reach the shared epoll");
		return 1;
	}
	pass();
	return 0;
}
