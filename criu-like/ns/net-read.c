// SPDX-License-Identifier: GPL-2.0
/*
 * The reads of a tree's network namespace at dump (Documentation/namespaces.md,
 * "Network namespaces"): its links, addresses, routes, rules, neighbours and
 * qdiscs through rtnetlink by the dumper's thread in the namespace (a
 * millisecond), and its sysctls (436 files of /proc/sys/net, 4-6 ms of the
 * freeze) by a thread of their own that enters the namespace, while the
 * dumper locks it and goes on with the cgroups, the other namespaces and the
 * tasks. ns_net_dump_finish() waits for it and writes the image: the sysctls
 * are the namespace's own, which nothing but the frozen tree changes. While
 * it runs the dumper is multithreaded, as with the early lock's and the
 * socket scan's threads (files/inet-diag.c): the setns() or unshare() of a
 * mount, user or time namespace that the dump needs is done in a child.
 */
#define LOG_PREFIX "ns: net: "

#include <errno.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "image.h"
#include "log.h"
#include "net-link.h"
#include "net-neigh.h"
#include "net-read.h"
#include "net-tc.h"
#include "ns.h"
#include "util.h"

int net_read_rtnl(pid_t pid, struct net_read *r)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	size_t i;
	int sk, err = 0;

	sk = rtnl_open();
	if (sk < 0)
		return sk;
	err = rtnl_dump(sk, RTM_GETLINK, AF_UNSPEC, &r->links);
	for (i = 0; !err && i < ARRAY_SIZE(fams); i++) {
		err = rtnl_dump(sk, RTM_GETADDR, fams[i], &r->addrs);
		if (!err)
			err = rtnl_dump(sk, RTM_GETROUTE, fams[i], &r->routes);
		if (!err)
			err = rtnl_dump(sk, RTM_GETRULE, fams[i], &r->rules);
	}
	close(sk);
	if (err) {
		pr_errno(err, "pid %d: cannot read its network namespace through rtnetlink", pid);
		return err;
	}
	sk = rtnl_open();
	if (sk < 0)
		return sk;
	err = net_neigh_read(pid, sk, &r->links, &r->neighs);
	if (!err)
		err = net_tc_read(pid, sk, &r->links, &r->qdiscs);
	close(sk);
	return err;
}

int net_read_check_routes(pid_t pid, const struct nl_buf *routes)
{
	const struct nlmsghdr *n;
	size_t off;

	for (off = 0; off < routes->len; off += NLMSG_ALIGN(n->nlmsg_len)) {
		struct rtattr *tb[RTA_MAX + 1];

		n = (const struct nlmsghdr *)(routes->data + off);
		nl_parse(n, sizeof(struct rtmsg), tb, RTA_MAX);
		if (tb[RTA_NH_ID]) {
			pr_err("pid %d: a route of its network namespace uses nexthop object %u: "
			       "nexthop objects are not dumped yet\n",
			       pid, attr_u32(tb[RTA_NH_ID], 0));
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* The sysctls' thread: in the namespace (setns is per thread), never back: it ends there. */
static void *sysctls_run(void *arg)
{
	struct net_dump *d = arg;

	if (setns(d->netns, CLONE_NEWNET)) {
		d->th_err = neg_errno();
		pr_perror("pid %d: cannot enter its network namespace to read its sysctls", d->pid);
		return NULL;
	}
	d->th_err = net_sysctls_read(d->pid, &d->r.links, &d->r.fresh, &d->r.sysctls);
	return NULL;
}

int net_read_sysctls_start(struct net_dump *d)
{
	d->th_started = !pthread_create(&d->th, NULL, sysctls_run, d);
	if (d->th_started)
		return 0;
	pr_debug("pid %d: no thread for the sysctls: read now\n", d->pid);
	sysctls_run(d);
	return d->th_err;
}

static void read_fini(struct net_read *r)
{
	nl_buf_fini(&r->links);
	nl_buf_fini(&r->addrs);
	nl_buf_fini(&r->routes);
	nl_buf_fini(&r->rules);
	nl_buf_fini(&r->neighs);
	nl_buf_fini(&r->qdiscs);
	net_sysctls_fini(&r->fresh);
	net_sysctls_fini(&r->sysctls);
	free(r->sysctlp);
}

/* The sysctls' thread ended: its result. */
static int sysctls_wait(struct net_dump *d)
{
	if (d->th_started) {
		pthread_join(d->th, NULL);
		d->th_started = false;
	}
	return d->th_err;
}

void net_dump_free(struct net_dump *d)
{
	if (!d)
		return;
	sysctls_wait(d);
	if (d->netns >= 0)
		close(d->netns);
	free(d->links);
	free(d->linkp);
	nl_buf_fini(&d->host);
	read_fini(&d->r);
	free(d);
}

/* the namespace's dump whose image is not written yet */
static struct net_dump *pending;

void net_dump_pending_set(struct net_dump *d)
{
	net_dump_free(pending);
	pending = d;
}

int ns_net_dump_finish(bool write)
{
	struct net_dump *d = pending;
	size_t i;
	int err;

	if (!d)
		return 0;
	pending = NULL;
	err = sysctls_wait(d);
	if (!write || err)
		goto out;
	d->r.sysctlp = calloc(d->r.sysctls.n + 1, sizeof(*d->r.sysctlp));
	if (!d->r.sysctlp) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < d->r.sysctls.n; i++)
		d->r.sysctlp[i] = &d->r.sysctls.e[i];
	d->e.sysctls = d->r.sysctlp;
	d->e.n_sysctls = d->r.sysctls.n;
	pr_info("pid %d: %zu links, %zu sysctls, %zu bytes of addresses, %zu of routes, %zu of "
		"rules\n",
		d->pid, d->e.n_links, d->e.n_sysctls, d->r.addrs.len, d->r.routes.len,
		d->r.rules.len);
	err = img_write_one(d->dirfd, CR_IMG_NETNS, d->id, &d->e.base);
out:
	net_dump_free(d);
	return err;
}
