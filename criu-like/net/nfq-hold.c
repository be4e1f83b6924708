// SPDX-License-Identifier: GPL-2.0
/*
 * The packet holder (include/nfq-hold.h): a process of its own on an NFQUEUE
 * of one network namespace, through libnetfilter_queue. What the lock's rules
 * queue there waits without a verdict; "release" accepts it all in one batch
 * verdict (the queue's order) and everything after it; "drop" or its death
 * drops (the kernel flushes a queue whose listener goes). A controller talks
 * to it over an abstract unix socket of the namespace, one byte a command:
 *
 *   r  release: accept what is held and whatever comes; answers the count
 *   s  sync: the controller removed our rules; verdict what is still queued
 *      (released: accepted), then answer, so that the lock's tables can go
 *      (deleting a base chain drops whatever a queue of the namespace holds)
 *   i, n  its pid, its queue number
 *   k  keep: stay when this controller goes (a kill-mode dump: the restore
 *      of its images finds the holder by name); without it a controller
 *      that goes away (crashed) makes the holder drop and exit
 *   g  give: each packet held that came in from outside (PREROUTING) and
 *      fits in what is kept (HOLD_KEEP_MAX), as a message of its own (a
 *      struct hold_pkt, then the packet from its network header on), then a
 *      lone struct hold_pkt with proto 0; then drop them all (a migration's
 *      source forwards them to the destination: Documentation/migration.md)
 *   d  drop what is held and exit
 *   q  exit (what is still held is dropped by the kernel)
 *
 * It is a grandchild of criu-like (reparented, never waited for by the
 * dumper or the restorer), with no fd of criu-like's but its own: it must
 * hold no namespace, image or terminal alive.
 *
 * libnetfilter_queue is loaded by the first holder's start (include/dl-lib.h),
 * in criu-like before its fork, not linked: with it, the two libraries it
 * brings (libnfnetlink, libmnl) were mapped in every restored task.
 *
 * This file is the controller's side. The holder process and its start are
 * nfq-holder.c, the rules that queue to it nfq-hold-rules.c, the holder of
 * each network namespace nfq-hold-ns.c.
 */
#define LOG_PREFIX "nfq-hold: "

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "nfq-hold-int.h"
#include "util.h"

static int hold_connect(const char *name, int *ret)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd, err = sock_addr(name, &a, &len);

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return neg_errno();
	if (connect(fd, (struct sockaddr *)&a, len)) {
		err = errno == ECONNREFUSED ? -ENOENT : neg_errno();
		close(fd);
		return err;
	}
	*ret = fd;
	return 0;
}

struct nfq_hold *hold_new(const char *name, int fd, int queue)
{
	struct nfq_hold *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->fd = fd;
	h->queue = queue;
	snprintf(h->name, sizeof(h->name), "%s", name);
	return h;
}

/* A command and its answer (an int); -errno when the holder is gone. */
int hold_ask(struct nfq_hold *h, char c)
{
	int n;

	if (send(h->fd, &c, 1, MSG_NOSIGNAL) != 1)
		return neg_errno();
	if (recv(h->fd, &n, sizeof(n), 0) != sizeof(n))
		return -EPIPE;
	return n;
}

int nfq_hold_find(const char *name, struct nfq_hold **ret)
{
	struct nfq_hold *h;
	int fd, made, err = hold_connect(name, &fd);

	if (err)
		return err;
	h = hold_new(name, fd, -1);
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->pid = hold_ask(h, 'i');
	h->queue = hold_ask(h, 'n');
	h->found = h->chains[0] = h->chains[1] = true;
	/* the tables raw the dump made for these rules, removed with them (nfq_hold_unhold()) */
	made = hold_ask(h, 'm');
	for (int i = 0; made >= 0 && i < 2; i++) {
		h->raw_made[i] = made & (1 << i);
		h->raw_known[i] = true;
	}
	if (h->pid <= 0 || h->queue < 0) {
		nfq_hold_stop(h, true);
		return -EPIPE;
	}
	*ret = h;
	return 0;
}

int nfq_hold_queue(const struct nfq_hold *h)
{
	return h->queue;
}

const char *nfq_hold_name(const struct nfq_hold *h)
{
	return h->name;
}

int nfq_hold_give(struct nfq_hold *h, nfq_hold_give_fn fn, void *priv)
{
	static uint8_t buf[sizeof(struct hold_pkt) + 0x10000];
	const struct hold_pkt *p = (const struct hold_pkt *)buf;
	char c = 'g';
	ssize_t len;
	int n = 0;

	if (send(h->fd, &c, 1, MSG_NOSIGNAL) != 1)
		return neg_errno();
	for (;;) {
		len = recv(h->fd, buf, sizeof(buf), 0);
		if (len < (ssize_t)sizeof(*p) || (size_t)len != sizeof(*p) + p->len)
			return -EPIPE;
		if (!p->proto)
			break;
		/* what cannot go is dropped: the peer retransmits it, as before */
		if (!fn(priv, p, buf + sizeof(*p)))
			n++;
	}
	return n;
}

int nfq_hold_release(struct nfq_hold *h)
{
	int n = hold_ask(h, 'r');

	if (n < 0)
		pr_warn("packet holder %s is gone: what it held was dropped, peers retransmit\n",
			h->name);
	else
		pr_info("packet holder %s: %d held packet%s let go\n", h->name, n,
			n == 1 ? "" : "s");
	return n;
}

/* Until the holder has exited (it closes its end): its queue is gone after this. */
static void hold_wait_gone(int fd)
{
	char c;
	struct pollfd p = { fd, POLLIN, 0 };

	if (poll(&p, 1, 2000) > 0)
		(void)!recv(fd, &c, 1, 0);
}

void nfq_hold_stop(struct nfq_hold *h, bool drop)
{
	char c = drop ? 'd' : 'q';

	if (!h)
		return;
	hold_unprime(h);
	if (send(h->fd, &c, 1, MSG_NOSIGNAL) == 1)
		hold_wait_gone(h->fd);
	pr_debug("packet holder %s stopped%s\n", h->name, drop ? ", what it held dropped" : "");
	close(h->fd);
	free(h);
}

void nfq_hold_detach(struct nfq_hold *h)
{
	if (!h)
		return;
	hold_unprime(h);
	/* the tables raw made for its rules: for the restore to remove with them */
	for (int i = 0; i < 2; i++)
		if (h->raw_made[i] && !nfq_hold_raw_theirs[i])
			hold_ask(h, i ? 'y' : 'x');
	if (hold_ask(h, 'k') < 0)
		pr_warn("packet holder %s is gone: the packets of the killed tree are dropped\n",
			h->name);
	else
		pr_info("packet holder %s keeps the packets until these images are restored\n",
			h->name);
	close(h->fd);
	free(h);
}

void nfq_hold_stop_name(const char *name)
{
	struct nfq_hold *h;

	if (!nfq_hold_find(name, &h))
		nfq_hold_stop(h, true);
}
