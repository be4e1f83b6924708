// SPDX-License-Identifier: GPL-2.0
/*
 * An epoll over 20 fds: 12 pipe read ends (every other one holding data),
 * 4 pipe write ends (EPOLLOUT | EPOLLET) and 4 eventfds (IN | OUT, two of
 * them counting), each with its own 64-bit data. A second epoll holds a
 * ready pipe registered EPOLLONESHOT that already fired (disabled until
 * re-armed) and another one that did not. After SIGTERM: the same readiness
 * and data from both; the registrations answer EPOLL_CTL_MOD and _DEL by
 * the task's fd numbers; the oneshot re-arms; readiness follows the fds. A
 * third epoll watches the first and reports it ready.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "zdtmtst.h"

#define NR_PIPES 12
#define NR_WR 4
#define NR_EV 4
#define NR_TARGETS (NR_PIPES + NR_WR + NR_EV)

struct target {
	int fd;
	uint32_t events; /* registered */
	uint32_t ready; /* expected from epoll_wait, 0 if not ready */
	uint64_t data;
};

static struct target tg[NR_TARGETS];
static int pipes[NR_PIPES][2];

static uint64_t data_of(int i, int fd)
{
	return 0x5a5a000000000000ull | (uint64_t)i << 16 | (uint64_t)fd;
}

static int setup_targets(int ep)
{
	uint64_t one = 1;
	int i, n = 0;

	for (i = 0; i < NR_PIPES; i++, n++) {
		if (pipe(pipes[i]) || (i % 2 && write(pipes[i][1], "x", 1) != 1))
			return neg_errno();
		tg[n] = (struct target){ pipes[i][0], EPOLLIN, i % 2 ? EPOLLIN : 0, 0 };
	}
	for (i = 0; i < NR_WR; i++, n++)
		tg[n] = (struct target){ pipes[i][1], EPOLLOUT | EPOLLET, EPOLLOUT, 0 };
	for (i = 0; i < NR_EV; i++, n++) {
		int fd = eventfd(0, EFD_NONBLOCK);

		if (fd < 0 || (i % 2 && write(fd, &one, sizeof(one)) != sizeof(one)))
			return neg_errno();
		tg[n] = (struct target){ fd, EPOLLIN | EPOLLOUT, EPOLLOUT | (i % 2 ? EPOLLIN : 0),
					 0 };
	}
	for (i = 0; i < NR_TARGETS; i++) {
		struct epoll_event ev = { .events = tg[i].events };

		tg[i].data = ev.data.u64 = data_of(i, tg[i].fd);
		if (epoll_ctl(ep, EPOLL_CTL_ADD, tg[i].fd, &ev))
			return neg_errno();
	}
	return 0;
}

/* The event of @n in @evs with @data, or NULL. */
static const struct epoll_event *find_ev(const struct epoll_event *evs, int n, uint64_t data)
{
	int i;

	for (i = 0; i < n; i++)
		if (evs[i].data.u64 == data)
			return &evs[i];
	return NULL;
}

/* epoll_wait(@ep) must report exactly the ready targets, each with its data. */
static int check_ready(int ep, const char *when)
{
	struct epoll_event evs[NR_TARGETS + 4];
	const struct epoll_event *e;
	int i, n, k = 0;

	n = epoll_wait(ep, evs, NR_TARGETS + 4, 0);
	if (n < 0) {
		fail("%s: epoll_wait: %m", when);
		return 1;
	}
	for (i = 0; i < NR_TARGETS; i++) {
		if (!tg[i].ready)
			continue;
		e = find_ev(evs, n, tg[i].data);
		if (!e || e->events != tg[i].ready) {
			fail("%s: target %d (fd %d) expected ready %x with data %llx, got %x", when,
			     i, tg[i].fd, tg[i].ready, (unsigned long long)tg[i].data,
			     e ? e->events : 0);
			return 1;
		}
		k++;
	}
	if (k != n) {
		fail("%s: %d events reported, %d expected", when, n, k);
		return 1;
	}
	return 0;
}

/* The app's own fd numbers still name the registrations. */
static int check_ctl(int ep)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char c;
	int i;

	/* edge-triggered: reported once, and nothing since made them writable again */
	for (i = NR_PIPES; i < NR_PIPES + NR_WR; i++)
		tg[i].ready = 0;

	/* the pipe with data at index 1 gets new data; index 3 is unregistered; 5 is drained */
	tg[1].data = ev.data.u64 = 0x1234;
	if (epoll_ctl(ep, EPOLL_CTL_MOD, tg[1].fd, &ev) ||
	    epoll_ctl(ep, EPOLL_CTL_DEL, tg[3].fd, NULL)) {
		fail("EPOLL_CTL_MOD/DEL by the task's fd numbers: %m");
		return 1;
	}
	tg[3].ready = 0;
	if (read(pipes[5][0], &c, 1) != 1)
		return 1;
	tg[5].ready = 0;
	/* an empty pipe gets data: it becomes ready */
	if (write(pipes[0][1], "y", 1) != 1)
		return 1;
	tg[0].ready = EPOLLIN;
	return check_ready(ep, "after MOD, DEL, a read and a write");
}

/* ep2: a fired oneshot (disabled) and a plain registration, both on ready pipes. */
static int check_oneshot(int ep2, int fd_oneshot)
{
	struct epoll_event evs[4], ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = 77 };

	if (epoll_wait(ep2, evs, 4, 0) != 1 || evs[0].data.u64 != 66) {
		fail("the second epoll: the fired oneshot is reported again, or the other is lost");
		return 1;
	}
	if (epoll_ctl(ep2, EPOLL_CTL_MOD, fd_oneshot, &ev) || epoll_wait(ep2, evs, 4, 0) != 2) {
		fail("the oneshot does not re-arm with EPOLL_CTL_MOD: %m");
		return 1;
	}
	return 0;
}

/* An epoll watching the big one: ready, since the big one has ready targets. */
static int check_nested(int epn)
{
	struct epoll_event evs[2];

	if (epoll_wait(epn, evs, 2, 0) != 1 || evs[0].data.u64 != 99 || evs[0].events != EPOLLIN) {
		fail("the epoll watching an epoll does not report it ready");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct epoll_event ev, evs[4];
	int ep, ep2, epn, p1[2], p2[2];

	test_init(argc, argv);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ep2 = epoll_create1(0);
	epn = epoll_create1(0);
	if (ep < 0 || ep2 < 0 || epn < 0 || setup_targets(ep) || pipe(p1) || pipe(p2) ||
	    write(p1[1], "a", 1) != 1 || write(p2[1], "b", 1) != 1) {
		fail("cannot set up: %m");
		return 1;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = 99;
	if (epoll_ctl(epn, EPOLL_CTL_ADD, ep, &ev))
		return 1;
	ev.data.u64 = 66;
	if (epoll_ctl(ep2, EPOLL_CTL_ADD, p1[0], &ev))
		return 1;
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = 77;
	/* fire the oneshot now: it stays registered but disabled */
	if (epoll_ctl(ep2, EPOLL_CTL_ADD, p2[0], &ev) || epoll_wait(ep2, evs, 4, 0) != 2) {
		fail("cannot fire the oneshot: %m");
		return 1;
	}
	test_daemon();
	test_waitsig();

	if (check_nested(epn) || check_ready(ep, "after restore") || check_ctl(ep) ||
	    check_oneshot(ep2, p2[0]))
		return 1;
	pass();
	return 0;
}
