// SPDX-License-Identifier: GPL-2.0
/*
 * criu-like net-lock: look at and manage the network locks by hand.
 *   list                 every lock of ours with its verdict (live, kept, stale)
 *   cleanup              remove the stale ones (what every dump and restore does)
 *   unlock NAME          remove one, e.g. a kept lock whose images will never be restored
 *   lock TUPLE...        lock connections as a dump does, print the name, hold the lock
 *                        until stdin ends or SIGINT/SIGTERM/SIGHUP, then remove it
 *   lock-batch TUPLE...  the same, every connection in one transaction
 *   keep TUPLE...        lock them and give the lock a kept name naming -D DIR (default
 *                        .), as a dump that kills its tree does; print that name and
 *                        leave it in place for as long as DIR/inventory.img records it
 * TUPLE is LOCAL,REMOTE with each end ADDR:PORT or [ADDR6]:PORT.
 */
#define LOG_PREFIX "net-lock: "

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "log.h"
#include "net-lock.h"
#include "nfq-hold.h"
#include "options.h"
#include "util.h"

static const char *const verdicts[] = {
	[NETLOCK_FOREIGN] = "foreign",
	[NETLOCK_LIVE] = "live",
	[NETLOCK_KEPT] = "kept",
	[NETLOCK_STALE] = "stale",
};

static int cmd_list(void)
{
	static const enum netlock_kind kinds[] = { NETLOCK_NFTABLES, NETLOCK_IPTABLES };
	size_t k;
	int i, err;

	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		_cleanup_free_ char **names = NULL;

		err = netlock_list(kinds[k], &names);
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		for (i = 0; names[i]; i++)
			printf("%s %s %s\n", netlock_kind_name(kinds[k]), names[i],
			       verdicts[netlock_verdict_of(kinds[k], names[i])]);
	}
	return 0;
}

static int parse_tuples(int argc, char **argv, struct inet_tuple **ret)
{
	struct inet_tuple *t = calloc((size_t)argc, sizeof(*t));
	int i;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < argc; i++)
		if (netlock_parse_tuple(argv[i], &t[i])) {
			pr_err("'%s' is not LOCAL,REMOTE (ADDR:PORT or [ADDR6]:PORT each)\n",
			       argv[i]);
			free(t);
			return -EINVAL;
		}
	*ret = t;
	return 0;
}

/* Until stdin ends or one of the signals a shell or a test sends arrives. */
static void hold(void)
{
	sigset_t set;
	_cleanup_close_ int sfd = -1;
	char buf[256];

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	for (;;) {
		struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
		if (p[1].revents)
			return;
		if (p[0].revents && read(STDIN_FILENO, buf, sizeof(buf)) <= 0)
			return;
	}
}

static int cmd_lock(const struct cr_options *o, bool keep, bool batch, int argc, char **argv)
{
	_cleanup_free_ struct inet_tuple *t = NULL;
	enum netlock_kind kind;
	struct netlock *nl;
	int i, err;

	if (netlock_parse_kind(o->network_lock, &kind) || kind == NETLOCK_SKIP) {
		pr_err("lock, keep: --network-lock must be nftables or iptables\n");
		return -EINVAL;
	}
	err = parse_tuples(argc, argv, &t);
	if (err)
		return err;
	nl = netlock_new(kind);
	if (!nl)
		return neg_errno();
	/* one at a time, as a dump calls netlock_dump_conn(); or all in one transaction */
	if (batch)
		err = netlock_add(nl, t, (size_t)argc);
	for (i = 0; i < argc && !err && !batch; i++)
		err = netlock_add(nl, &t[i], 1);
	if (!err && keep) {
		/* named after -D, like a dump: it lives as long as DIR/inventory.img records it */
		_cleanup_free_ char *dir = realpath(o->images_dir, NULL);

		err = dir ? netlock_keep(nl, NULL, dir) : neg_errno();
	}
	if (!err) {
		printf("%s\n", netlock_name(nl));
		fflush(stdout);
		if (!keep)
			hold();
	}
	/* a failure removes what was installed; the first error is the one returned */
	if (err || !keep) {
		int rerr = netlock_remove(nl);

		if (!err)
			err = rerr;
	}
	netlock_free(nl);
	return err;
}

int cr_net_lock(const struct cr_options *o, int argc, char **argv)
{
	enum netlock_kind kind;
	int ret;

	if (argc < 1) {
		pr_err("net-lock needs an action: list, cleanup, unlock NAME, lock TUPLE..., keep "
		       "TUPLE...\n");
		return -EINVAL;
	}
	if (!strcmp(argv[0], "list") && argc == 1)
		return cmd_list();
	if (!strcmp(argv[0], "cleanup") && argc == 1) {
		if (netlock_parse_kind(o->network_lock, &kind))
			return -EINVAL;
		if (kind == NETLOCK_SKIP)
			return 0;
		ret = netlock_cleanup(kind, false);
		if (ret >= 0)
			ret += nfq_hold_cleanup();
		if (ret >= 0)
			printf("%d stale lock%s removed\n", ret, ret == 1 ? "" : "s");
		return ret < 0 ? ret : 0;
	}
	if (!strcmp(argv[0], "unlock") && argc == 2) {
		/* a kept lock's packet holder goes with it, dropping what it held */
		nfq_hold_stop_name(argv[1]);
		return netlock_remove_name(argv[1]);
	}
	if (!strcmp(argv[0], "lock") && argc >= 2)
		return cmd_lock(o, false, false, argc - 1, argv + 1);
	if (!strcmp(argv[0], "lock-batch") && argc >= 2)
		return cmd_lock(o, false, true, argc - 1, argv + 1);
	if (!strcmp(argv[0], "keep") && argc >= 2)
		return cmd_lock(o, true, false, argc - 1, argv + 1);
	pr_err("'%s' with %d argument%s is not an action (list, cleanup, unlock NAME, "
	       "lock TUPLE..., lock-batch TUPLE..., keep TUPLE...)\n",
	       argv[0], argc - 1, argc == 2 ? "" : "s");
	return -EINVAL;
}
