// SPDX-License-Identifier: GPL-2.0
/*
 * What the socket kinds of every family share on dump (files-int.h): their
 * network namespace checked against the tree's, whether the tree holds a
 * socket, and the sock_diag netlink socket of the tree's namespace.
 */
#define LOG_PREFIX "files: "

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "files-int.h"
#include "log.h"
#include "ns.h"
#include "util.h"

/*
 * Whether the socket @f lives in the network namespace the tree is dumped
 * in: the tree's own (a container's, where sock_diag is asked and where the
 * restore creates its sockets) or else the dumper's. @what names the socket
 * for the refusal ("an inet").
 */
int sock_check_netns(const struct fd_info *f, const char *what)
{
	struct stat self, sk;
	int ns = ioctl(f->dfd, SIOCGSKNS);
	int err = 0;

	if (ns < 0) {
		pr_perror("pid %d fd %d: SIOCGSKNS of %s", f->pid, f->fd, f->link);
		return neg_errno();
	}
	if (fstat(ns, &sk) || (ns_net_tree_fd() >= 0 ? fstat(ns_net_tree_fd(), &self)
						     : stat("/proc/self/ns/net", &self)))
		err = neg_errno();
	close(ns);
	if (err) {
		pr_errno(err, "pid %d fd %d: cannot compare network namespaces", f->pid, f->fd);
		return err;
	}
	if (sk.st_ino != self.st_ino || sk.st_dev != self.st_dev) {
		pr_err("pid %d fd %d: %s is %s socket of another network namespace (net:[%lu]) "
		       "than the tree's: not supported yet\n",
		       f->pid, f->fd, f->link, what, (unsigned long)sk.st_ino);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Whether a task of the tree has the socket @ino (on the sockfs @dev) open: a
 * description dumped already, or a /proc/PID/fd link of a task (all frozen).
 */
bool sock_in_tree(const struct dump_ctx *ctx, dev_t dev, uint32_t ino)
{
	char want[32], link[64];
	unsigned int i;

	if (ctx->files && file_desc_next(ctx->files, dev, ino, NULL))
		return true;
	snprintf(want, sizeof(want), "socket:[%u]", ino);
	for (i = 0; i < ctx->nr_tasks; i++) {
		_cleanup_closedir_ DIR *dir = NULL;
		struct dirent *de;
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/fd", ctx->tasks[i].t->pid);
		dir = opendir(path);
		while (dir && (de = readdir(dir))) {
			ssize_t n;

			if (de->d_name[0] == '.')
				continue;
			n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
			if (n > 0 && (link[n] = '\0', !strcmp(link, want)))
				return true;
		}
	}
	return false;
}

int sock_diag_open(struct nl_sock **ret)
{
	struct nl_sock *sk = nl_socket_alloc();
	int err, saved;

	*ret = NULL;
	if (!sk)
		return -ENOMEM;
	/* A dump's parts may be larger than libnl's default buffer: peek at their size. */
	nl_socket_enable_msg_peek(sk);
	/* the socket answers for the namespace it is made in: the tree's own, if it has one */
	err = ns_net_enter_tree(&saved);
	if (err) {
		nl_socket_free(sk);
		return err;
	}
	err = nl_connect(sk, NETLINK_SOCK_DIAG);
	ns_net_leave_tree(saved);
	if (err < 0) {
		pr_err("cannot connect to sock_diag: %s\n", nl_geterror(err));
		nl_socket_free(sk);
		return -EIO;
	}
	*ret = sk;
	return 0;
}

int sock_diag_send(struct nl_sock *sk, const void *req, size_t len, int flags)
{
	struct nl_msg *msg = nlmsg_alloc_simple(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | flags);
	int err;

	if (!msg)
		return -ENOMEM;
	err = nlmsg_append(msg, (void *)req, len, NLMSG_ALIGNTO);
	if (!err)
		err = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	return err;
}
