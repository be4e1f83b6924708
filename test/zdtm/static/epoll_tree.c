// SPDX-License-Identifier: GPL-2.0
/*
 * An epoll shared by a parent and its child (created and filled before the
 * fork: the child holds the same targets at the same numbers), and an epoll
 * of the child alone. After SIGTERM the child sees the same readiness and
 * data in both, and changes a registration of the shared one with
 * EPOLL_CTL_MOD by its own fd number; the parent then sees the new data:
 * the registrations were restored once, in one process, and are shared.
 */
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR 6
#define NEW_DATA 0xfeedull

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
				return -1;
			fds[i] = p[0];
		} else {
			fds[i] = eventfd(i == 4, EFD_NONBLOCK);
			if (fds[i] < 0)
				return -1;
		}
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			return -1;
	}
	return 0;
}

/* @ep reports exactly @n events, with data @d0 (and @d1). */
static int expect(int ep, const char *who, int n, uint64_t d0, uint64_t d1)
{
	struct epoll_event evs[NR + 1];
	int got = epoll_wait(ep, evs, NR + 1, 0), i, ok = got == n;

	for (i = 0; ok && i < got; i++)
		ok = evs[i].events == EPOLLIN && (evs[i].data.u64 == d0 || evs[i].data.u64 == d1);
	if (!ok) {
		test_msg("%s: %d events (first data %llx), expected %d with data %llx/%llx\n", who,
			 got, got > 0 ? (unsigned long long)evs[0].data.u64 : 0ull, n,
			 (unsigned long long)d0, (unsigned long long)d1);
		return 1;
	}
	return 0;
}

static int child(int ep, int ready)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = NEW_DATA };
	int own = epoll_create1(0), p[2];

	if (own < 0 || pipe(p) || write(p[1], "c", 1) != 1)
		return 2;
	ev.data.u64 = 0xc0;
	if (epoll_ctl(own, EPOLL_CTL_ADD, p[0], &ev) || epoll_ctl(own, EPOLL_CTL_ADD, p[1], &ev))
		return 2;
	if (write(ready, "r", 1) != 1)
		return 2;
	test_waitsig();
	if (expect(ep, "child, shared epoll", 2, data_of(0), data_of(4)) ||
	    expect(own, "child, its own epoll", 1, 0xc0, 0xc0))
		return 1;
	ev.data.u64 = NEW_DATA;
	if (epoll_ctl(ep, EPOLL_CTL_MOD, fds[0], &ev)) {
		test_msg("child: EPOLL_CTL_MOD on the shared epoll: %m\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
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

	if (expect(ep, "parent, after restore", 2, data_of(0), data_of(4))) {
		fail("the shared epoll's readiness changed");
		test_reap_children(&pid, 1);
		return 1;
	}
	if (test_reap_children(&pid, 1)) {
		fail("the child found its epolls changed");
		return 1;
	}
	if (expect(ep, "parent, after the child's EPOLL_CTL_MOD", 2, NEW_DATA, data_of(4))) {
		fail("the child's EPOLL_CTL_MOD did not reach the shared epoll");
		return 1;
	}
	pass();
	return 0;
}
